#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2) against the API stand-in: a pod that
# never becomes Ready fails the call with KUBERNETES_POD_NOT_READY after
# KUBERNETES_SANDBOX_READY_TIMEOUT_MS, naming the pod and its phase, and
# the pod (and its secret) is deleted rather than left behind; once pods
# run again the next call gets a computer.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start '{"neverReady":true}'
export KUBERNETES_SANDBOX_READY_TIMEOUT_MS=1500
ctl_start

api POST /v1/computers '{"id":"slow"}' >/dev/null
t0=$(date +%s%N)
r=$(api POST /v1/tools/shell '{"computer":"slow","bot":"alice","command":"echo hi"}')
t1=$(date +%s%N)
t_contains "$r" '"code":"KUBERNETES_POD_NOT_READY"' "the ready deadline: stable code"
t_contains "$r" 'was not ready within 1500 ms (phase Pending)' "the sentence says why"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 1400 ] && [ "$ms" -lt 10000 ] || t_fail "the deadline took $ms ms"
t_eq "$(kube_pods)" "" "the pod that never got ready is gone"
kube GET "/api/v1/namespaces/$K8S_NS/secrets" >/dev/null
t_eq "$(jq '.items | length' "$T/kube.out")" 0 "and its secret"

k8s_test faults '{"neverReady":false}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"slow","bot":"alice","command":"echo now"}')
t_contains "$r" 'now' "a later call gets a computer"
t_note "ok"
