#!/bin/bash
# The kubernetes provider (SPEC P-2, P-3) against the API stand-in: a
# computer's pod is named by the computer alone, so a second controller
# that starts the same computer while the first one's pod runs gets the
# API's 409 AlreadyExists as KUBERNETES_ALREADY_EXISTS with the API's
# message, makes no second pod and deletes nothing; the first
# controller's computer goes on answering.  The second controller's
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

CTL_URL=$A_URL
r=$(api POST /v1/tools/shell '{"computer":"team","bot":"alice","command":"echo still"}')
t_contains "$r" 'still' "the first computer still answers"
t_note "ok"
