#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2, P-3) against the API stand-in: a
# computer's pod is named by the computer alone, so a second controller
# that starts the same computer while the first one's pod runs gets the
# API's 409 AlreadyExists as KUBERNETES_ALREADY_EXISTS with the API's
# message, makes no second pod and deletes nothing (its stop and delete
# neither: a pod is deleted only by the uid its controller started); the
# first controller's computer goes on answering, and once a pod under
# the name is the other's, the first one's stop leaves it alone.  The second controller's
# kubeconfig names its CA and token by file (the first's inline).
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start
ctl_start
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo first"}')
t_contains "$r" 'first' "the first controller's computer"
POD=$(kube_pods)

# A second controller, with its own state, on the same cluster; its
# kubeconfig names the CA and the token as files (relative to it).
mkdir "$T/kube-b"
cp "$T/k8s-ca.crt" "$T/kube-b/ca.crt"
printf '%s\n' "$K8S_TOKEN" > "$T/kube-b/token"
cat > "$T/kube-b/config" <<EOC
apiVersion: v1
kind: Config
current-context: b
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:$K8S_PORT
    certificate-authority: ca.crt
contexts:
- name: b
  context: {cluster: c, user: u, namespace: $K8S_NS}
users:
- name: u
  user: {tokenFile: token}
EOC
mkfifo "$T/b-ready"
KUBECONFIG="$T/kube-b/config" "$RAKAZOCTL" serve --listen 127.0.0.1:0 --data-dir "$T/data-b" \
    --token-file "$CTL_TOKEN" --ready-file "$T/b-ready" --log-level debug \
    >"$T/serve-b.log" 2>&1 &
B_PID=$!
T_KILL="$T_KILL $B_PID"
exec 5<>"$T/b-ready"
read -t 30 -r B_PORT <&5 || t_fail "the second controller did not start"
exec 5<&-
A_URL=$CTL_URL
CTL_URL="http://127.0.0.1:$B_PORT"
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"bob","command":"echo second"}')
t_contains "$r" '"code":"KUBERNETES_ALREADY_EXISTS"' "409: a stable code"
t_contains "$r" "pods \\\"$POD\\\" already exists" "with the API's message"
t_contains "$r" 'HTTP 409 AlreadyExists' "and its status"
t_eq "$(kube_pods)" "$POD" "still one pod"
grep -q '^DELETE ' "$K8S_LOG" && t_fail "the second controller deleted something"
t_eq "$(grep -c '^POST /api/v1/namespaces/rakazo-test/pods ' "$K8S_LOG")" 2 \
    "two creates, one pod"

# Its stop and delete leave the first controller's pod alone.
api POST /v1/computers/team/stop '{}' >/dev/null
r=$(api DELETE /v1/computers/team)
t_eq "${r%% *}" 200 "the second controller deletes its computer: $r"
t_eq "$(kube_pods)" "$POD" "the first controller's pod stays"
grep -q '^DELETE /api/v1/namespaces/rakazo-test/pods/' "$K8S_LOG" &&
	t_fail "the second controller deleted the first's pod"

CTL_URL=$A_URL
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo still"}')
t_contains "$r" 'still' "the first computer still answers"

# The first pod goes; the second controller makes one under the name.
# The first controller's stop names its own pod's uid: the API refuses
# the precondition, and the other's pod stays.
k8s_test "delete/$K8S_NS/$POD" >/dev/null
k8s_wait_log "DELETED-DONE $K8S_NS/$POD" 30
CTL_URL="http://127.0.0.1:$B_PORT"
api POST /v1/computers '{"id":"team"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"bob","command":"echo second now"}')
t_contains "$r" 'second now' "the second controller's pod"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
UID_B=$(jq -r .metadata.uid "$T/kube.out")
CTL_URL=$A_URL
: > "$K8S_LOG"
api POST /v1/computers/team/stop '{}' >/dev/null
grep -q "^DELETE /api/v1/namespaces/rakazo-test/pods/$POD 409" "$K8S_LOG" ||
	t_fail "the stop did not name its pod's uid"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
t_eq "$(jq -r .metadata.uid "$T/kube.out")" "$UID_B" "the other controller's pod stays"
grep -q 'event=kubernetes.stop_foreign' "$CTL_LOG" || t_fail "not logged"
t_note "ok"
