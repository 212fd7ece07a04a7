#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2) against the API stand-in, with
# KUBERNETES_SANDBOX_HOME_CLAIM: each computer's home is a subPath of its
# own (its id) on the one PersistentVolumeClaim, and every pod of the
# claim carries the claim's label and a required pod affinity on it by
# node, so a ReadWriteOnce volume's pods share a node.  What a computer
# writes lands in its own subPath of the claim (the stand-in's
# directory for it).  A claim name that is no name is a setup failure.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start
KUBERNETES_SANDBOX_HOME_CLAIM='Homes!' "$RAKAZOCTL" serve \
    --listen 127.0.0.1:0 --data-dir "$T/bad" --token-file "$CTL_TOKEN" \
    >"$T/bad.log" 2>&1 && t_fail "serve started with a bad claim name"
t_contains "$(cat "$T/bad.log")" "KUBERNETES_SANDBOX_HOME_CLAIM is not a claim name" \
    "a bad claim: a setup failure"

export KUBERNETES_SANDBOX_HOME_CLAIM=rakazo-homes
ctl_start
for c in team lab; do
	api POST /v1/computers "{\"id\":\"$c\"}" >/dev/null
	r=$(api POST /v1/tools/write_file "{\"computer\":\"$c\",\"bot\":\"alice\",\"path\":\"bots/alice/notes.txt\",\"content\":\"home of $c\"}")
	t_eq "${r%% *}" 200 "a file in $c: $r"
done
grep -q '^INVALID' "$K8S_LOG" && t_fail "the stand-in refused an object"
for c in team lab; do
	kube GET "/api/v1/namespaces/$K8S_NS/pods?labelSelector=rakazo-computer-id%3D$c" >/dev/null
	jq '.items[0]' "$T/kube.out" > "$T/pod.json"
	jqe() { jq -e "$1" "$T/pod.json" >/dev/null || t_fail "$c's pod: $1 ($(jq -c . "$T/pod.json"))"; }
	jqe '.spec.volumes[] | select(.name == "home") | .persistentVolumeClaim.claimName == "rakazo-homes"'
	jqe '.spec.containers[0].volumeMounts[] | select(.name == "home") | .subPath == "'"$c"'"'
	jqe '.metadata.labels["rakazo-home-claim"] == "rakazo-homes"'
	jqe '.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0] == {"labelSelector":{"matchLabels":{"rakazo-home-claim":"rakazo-homes"}},"topologyKey":"kubernetes.io/hostname"}'
	t_eq "$(cat "$K8S_DIR/pvc/rakazo-homes/$c/bots/alice/notes.txt")" "home of $c" \
	    "$c's file in its subPath of the claim"
done
t_note "ok"
