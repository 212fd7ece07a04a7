#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2, C-8) against the API stand-in: a
# computer whose pod is evicted (node pressure: the pod stays, Failed,
# reason Evicted) or deleted behind the controller's back is gone
# (alive 0): its run ends gone, the next call clears the dead pod,
# makes a new one and restores the workspace from the home store
# (the local one under DATA_DIR) before the call runs.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start
ctl_start
runs_ended() {
	api GET /v1/computers/team/runs >/dev/null
	jq "[.runs[] | select(.endReason == \"$1\")] | length" "$T/api.out"
}
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/write_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt","content":"kept across pods"}')
t_contains "$r" '200' "a file in the first pod"
t_contains "$(ctl checkpoint team)" "team revision 1" "saved to the home store"
POD=$(kube_pods)
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
UID1=$(jq -r .metadata.uid "$T/kube.out")

# Evicted: the pod object stays, Failed.
k8s_test "evict/$K8S_NS/$POD" >/dev/null
r=$(api POST /v1/tools/read_file '{"computer":"team","bot":"alice","path":"bots/alice/notes.txt"}')
t_contains "$r" 'kept across pods' "restored in the replacement"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
UID2=$(jq -r .metadata.uid "$T/kube.out")
[ "$UID2" != "$UID1" ] || t_fail "the evicted pod was reused"
jq -e '.status.phase == "Running"' "$T/kube.out" >/dev/null ||
    t_fail "the replacement does not run"
t_eq "$(runs_ended gone)" 1 "the evicted run ended gone"
grep -q 'event=kubernetes.gone computer=team .*reason=Evicted' "$CTL_LOG" ||
    t_fail "the eviction is not in the log"

# Deleted by someone else: gone too, and replaced.
k8s_test "delete/$K8S_NS/$POD" >/dev/null
k8s_wait_log "DELETED-DONE $K8S_NS/$POD" 30
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"cat notes.txt"}')
t_contains "$r" 'kept across pods' "restored after a deletion"
t_eq "$(runs_ended gone)" 2 "the deleted run ended gone"
t_eq "$(kube_pods)" "$POD" "one pod again"
t_note "ok"
