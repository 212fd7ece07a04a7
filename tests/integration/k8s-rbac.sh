#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2, C-13) against the API stand-in:
# - RBAC: a service account that may not create pods gets the API's 403
#   as KUBERNETES_FORBIDDEN, quoting the API (who may not do what, where);
#   one that may not list pods makes /internal/health a setup failure
#   with the same code.
# - "Cannot tell": with the API refusing the credentials (401) or failing
#   (503), a running computer is neither replaced nor marked gone: the
#   call (and a stop, which could not save its work first) fails with
#   PROVIDER_CANNOT_TELL, no pod is created or deleted,
#   the run stays open; once the API answers, the same pod serves again.
# - No token or secret in the controller's log.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start '{"forbid":["create pods"]}'
ctl_start
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo hi"}')
t_contains "$r" '"code":"KUBERNETES_FORBIDDEN"' "403: a stable code"
t_contains "$r" 'cannot create resource \"pods\" in API group \"\" in the namespace \"rakazo-test\"' \
    "the API's words"
t_contains "$r" 'create the computer' "what the controller tried"
t_eq "$(kube_pods)" "" "no pod"

k8s_test faults '{"forbid":["list pods"]}' >/dev/null
r=$(api GET /internal/health)
t_eq "${r%% *}" 503 "health: a setup failure"
t_contains "$r" '"code":"KUBERNETES_FORBIDDEN"' "health names the code"
t_contains "$r" 'cannot list resource' "and the API's words"

k8s_test faults '{"forbid":[]}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo running"}')
t_contains "$r" 'running' "allowed now: a computer"
POD=$(kube_pods)
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
UID1=$(jq -r .metadata.uid "$T/kube.out")
creates() { grep -c '^POST /api/v1/namespaces/rakazo-test/pods ' "$K8S_LOG"; }
n0=$(creates)

# 401: the controller cannot tell whether the computer runs.
k8s_test faults '{"unauthorized":true}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo no"}')
t_contains "$r" '"code":"PROVIDER_CANNOT_TELL"' "401: cannot tell"
t_contains "$r" 'it is not replaced' "the sentence says so"
grep -q 'event=kubernetes.alive computer=team code=KUBERNETES_UNAUTHORIZED' "$CTL_LOG" ||
    t_fail "the 401 is not in the log"
# Nor is it stopped unsaved (an explicit stop; the idle one alike).
r=$(api POST /v1/computers/team/stop '{}')
t_contains "$r" '"code":"PROVIDER_CANNOT_TELL"' "a stop while unsure"
t_contains "$r" 'it is not stopped' "the stop's sentence"
# The reconciler does not take it for gone either.
r=$(ctl_sql "SELECT state FROM computers WHERE id='team'")
t_eq "$r" running "still running in the store"
k8s_test faults '{"unauthorized":false,"failNext":{"GET pods":503}}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo no"}')
t_contains "$r" '"code":"PROVIDER_CANNOT_TELL"' "503: cannot tell"
t_eq "$(creates)" "$n0" "no pod created while unsure"
grep -q '^DELETE ' "$K8S_LOG" && t_fail "a pod was deleted while unsure"

r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo back"}')
t_contains "$r" 'back' "the API answers again: the same computer"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
t_eq "$(jq -r .metadata.uid "$T/kube.out")" "$UID1" "the same pod"
api GET /v1/computers/team/runs >/dev/null
t_eq "$(jq '[.runs[] | select(.endReason != null and .endReason != "")] | length' "$T/api.out")" 0 \
    "no run ended"
grep -qF -- "$K8S_TOKEN" "$CTL_LOG" && t_fail "the API token is in the log"
t_note "ok"
