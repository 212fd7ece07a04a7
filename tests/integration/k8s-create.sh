#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2) against the API stand-in
# (tests/lib-k8s.sh; no real cluster): a tool call makes the computer's
# pod, whose spec passed the official schemas, waits for it to be Ready
# through a watch and runs a command in the real guestd it runs, reached
# on the pod's IP.  The pod is uid 1000, without a service-account token,
# service links, privilege escalation or capabilities, labelled as the
# provider says, with the settings' labels, annotations, limits and
# runtime class, and guestd gets the home size cap (HOME_MAX_BYTES); its
# secret is a Secret, mounted, owned by the pod, and nowhere in the pod's
# spec, nor are serve's own secrets (the database's password, the object
# store's keys, the API token): the containers' environment is only
# GUESTD_SECRET_FILE and the cap; a stop deletes the pod and its secret.
# A controller that lost its reference adopts the pod of its store.
# A client certificate authenticates as a token does; a wrong token is
# KUBERNETES_UNAUTHORIZED in /internal/health.
# Invalid KUBERNETES_SANDBOX_POD_LABELS is a setup failure; a pod the
# API refuses (422, here a CPU quantity) is KUBERNETES_INVALID.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start

# Invalid JSON settings stop start-up with a sentence naming the setting.
KUBERNETES_SANDBOX_POD_LABELS='{"team":' "$RAKAZOCTL" serve \
    --listen 127.0.0.1:0 --data-dir "$T/bad" --token-file "$CTL_TOKEN" \
    >"$T/bad.log" 2>&1 && t_fail "serve started with invalid pod labels"
t_contains "$(cat "$T/bad.log")" "KUBERNETES_SANDBOX_POD_LABELS is not valid JSON" \
    "invalid labels: a setup failure"
KUBERNETES_SANDBOX_POD_ANNOTATIONS='["a"]' "$RAKAZOCTL" serve \
    --listen 127.0.0.1:0 --data-dir "$T/bad" --token-file "$CTL_TOKEN" \
    >"$T/bad.log" 2>&1 && t_fail "serve started with array annotations"
t_contains "$(cat "$T/bad.log")" "KUBERNETES_SANDBOX_POD_ANNOTATIONS must be a JSON object" \
    "array annotations: a setup failure"

KUBERNETES_SANDBOX_POD_LABELS='{"team":"blue team"}' "$RAKAZOCTL" serve \
    --listen 127.0.0.1:0 --data-dir "$T/bad" --token-file "$CTL_TOKEN" \
    >"$T/bad.log" 2>&1 && t_fail "serve started with an invalid label value"
t_contains "$(cat "$T/bad.log")" '"team" is not a valid label' \
    "a label the API would refuse: a setup failure"

# A client certificate (inline in the kubeconfig) instead of a token.
k8s_kubeconfig "$T/kubeconfig-cert" cert
KUBECONFIG="$T/kubeconfig-cert" ctl_start
r=$(api GET /internal/health)
t_eq "${r%% *}" 200 "health with a client certificate: $r"
ctl_stop
k8s_kubeconfig "$T/kubeconfig-bad" wrong-token
KUBECONFIG="$T/kubeconfig-bad" ctl_start
r=$(api GET /internal/health)
t_eq "${r%% *}" 503 "health with a wrong token"
t_contains "$r" '"code":"KUBERNETES_UNAUTHORIZED"' "401: a stable code"
ctl_stop
grep -q wrong-token "$CTL_LOG" && t_fail "the token is in the log"

# The stand-in refuses what a cluster would: a malformed pod is 422.
r=$(kube POST "/api/v1/namespaces/$K8S_NS/pods" '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"seven"}]}]}}')
t_eq "${r%% *}" 422 "a malformed pod: 422"
t_contains "$r" '"reason":"Invalid"' "an Invalid Status"
t_contains "$r" 'containerPort must be integer' "naming the field"
: > "$K8S_LOG"

# A quantity the API refuses reaches the caller as KUBERNETES_INVALID.
KUBERNETES_SANDBOX_CPU_LIMIT='two cores' ctl_start
api POST /v1/computers '{"id":"q"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"q","bot":"alice","command":"true"}')
t_contains "$r" '"code":"KUBERNETES_INVALID"' "422: a stable code"
t_contains "$r" 'cpu must match format \"quantity\"' "with the API's words"
ctl_stop
: > "$K8S_LOG"

export KUBERNETES_SANDBOX_POD_LABELS='{"team":"blue"}'
export KUBERNETES_SANDBOX_POD_ANNOTATIONS='{"example.com/owner":"ops team"}'
export KUBERNETES_SANDBOX_RUNTIME_CLASS_NAME=gvisor
export KUBERNETES_SANDBOX_CPU_LIMIT=500m
export KUBERNETES_SANDBOX_MEMORY_LIMIT=1Gi
export HOME_MAX_BYTES=3G
# serve's own secrets (issue 26): none may reach the pod's spec.
export PGPASSWORD="k8s-pg-Tx93-$$" AWS_SECRET_ACCESS_KEY="k8s-aws-Kp45-$$"
export OBJECT_STORAGE_SECRET_ACCESS_KEY="k8s-os-Zq81-$$"
ctl_start

r=$(api GET /internal/health)
t_eq "${r%% *}" 200 "health with the API up"

api POST /v1/computers '{"id":"Team_1"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"Team_1","bot":"alice","command":"id -u; echo hello from the pod"}')
t_eq "${r%% *}" 200 "a tool call in the pod: $r"
t_contains "$r" 'hello from the pod' "the command ran in the pod's guestd"
[ "$(id -u)" -ne 0 ] || t_contains "$r" '1000' "guestd runs as uid 1000"

pods=$(kube_pods)
t_eq "$(printf '%s\n' "$pods" | wc -l)" 1 "one pod"
POD=$pods
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
P="$T/kube.out"
jqe() { jq -e "$1" "$P" >/dev/null || t_fail "pod spec: $1 ($(jq -c . "$P"))"; }
jqe '.spec.automountServiceAccountToken == false'
jqe '.spec.enableServiceLinks == false'
jqe '.spec.securityContext.runAsUser == 1000 and .spec.securityContext.runAsNonRoot == true'
jqe '[.spec.containers[], .spec.initContainers[]] | all(.securityContext.allowPrivilegeEscalation == false and .securityContext.capabilities.drop == ["ALL"] and .securityContext.runAsNonRoot == true and .securityContext.runAsUser == 1000)'
jqe '.metadata.labels["app.kubernetes.io/name"] == "rakazo-computer"'
jqe '.metadata.labels["rakazo-bot-id"] == "Team_1"'
jqe '.metadata.labels.team == "blue"'
jqe '.metadata.annotations["example.com/owner"] == "ops team"'
jqe '.spec.runtimeClassName == "gvisor"'
jqe '.spec.containers[0].resources.limits == {"cpu":"500m","memory":"1Gi"}'
jqe '.spec.containers[0].image == "rakazo-computer:test"'
jqe '.spec.containers[0].env | any(.name == "GUESTD_HOME_MAX_BYTES" and .value == "3221225472")'
jqe '.spec.volumes[] | select(.name == "secret-src") | .secret.secretName == "'"$POD"'"'
jqe '.status.podIP | startswith("'"$K8S_IP_BASE"'.")'
# The containers' environment is the provider's alone: no envFrom, and
# guestd's is GUESTD_SECRET_FILE (a path) and the home size cap, and
# nothing of serve's.
jqe '[.spec.containers[], .spec.initContainers[]] | all(.envFrom == null)'
jqe '.spec.containers[0].env | map(.name) | sort == ["GUESTD_HOME_MAX_BYTES", "GUESTD_SECRET_FILE"]'
jqe '[.spec.initContainers[] | .env // [] | length] | add == 0'
for v in "$PGPASSWORD" "$AWS_SECRET_ACCESS_KEY" \
    "$OBJECT_STORAGE_SECRET_ACCESS_KEY" "$(cat "$CTL_TOKEN")"; do
	grep -qF -- "$v" "$P" && t_fail "serve's secret $v is in the pod's spec"
done
# The secret lives in the Secret alone, owned by the pod.
kube GET "/api/v1/namespaces/$K8S_NS/secrets/$POD" >/dev/null
SEC=$(jq -r '.data.guestd' "$T/kube.out" | base64 -d)
[ -n "$SEC" ] || t_fail "no secret in the Secret"
jq -e '.metadata.ownerReferences[0].kind == "Pod"' "$T/kube.out" >/dev/null ||
    t_fail "the Secret is not owned by the pod"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
grep -qF -- "$SEC" "$T/kube.out" && t_fail "the secret is in the pod's spec"
grep -qF -- "$SEC" "$CTL_LOG" && t_fail "the secret is in the controller's log"
grep -qF -- "$K8S_TOKEN" "$CTL_LOG" && t_fail "the API token is in the log"
# Readiness came through a watch from the create's version.
grep -q '^WATCH /api/v1/namespaces/rakazo-test/pods?watch=1&fieldSelector=metadata.name%3D'"$POD"'&resourceVersion=[0-9]' "$K8S_LOG" ||
    t_fail "no watch with a resourceVersion"
grep -q '^INVALID' "$K8S_LOG" && t_fail "the stand-in refused an object"

# The second call reuses the running pod.
r=$(api POST /v1/tools/shell '{"computer":"Team_1","bot":"alice","command":"echo again"}')
t_contains "$r" 'again' "a second call"
t_eq "$(grep -c '^POST /api/v1/namespaces/rakazo-test/pods ' "$K8S_LOG")" 1 "one pod made"

# A controller that lost its reference (a crash between the create and
# the record) adopts the pod its store made instead of a 409 or a second.
ctl_stop
ctl_sql "UPDATE computers SET ref='{}' WHERE id='Team_1'"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
UID1=$(jq -r .metadata.uid "$T/kube.out")
ctl_start
r=$(api POST /v1/tools/shell '{"computer":"Team_1","bot":"alice","command":"echo adopted"}')
t_contains "$r" 'adopted' "the lost pod adopted"
kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" >/dev/null
t_eq "$(jq -r .metadata.uid "$T/kube.out")" "$UID1" "the same pod"
grep -q "event=kubernetes.adopted computer=Team_1" "$CTL_LOG" || t_fail "no adoption logged"
t_eq "$(grep -c '^POST /api/v1/namespaces/rakazo-test/pods 201' "$K8S_LOG")" 1 "still one pod made"

r=$(api POST /v1/computers/Team_1/stop '{}')
t_eq "${r%% *}" 200 "stop: $r"
t_eq "$(kube GET "/api/v1/namespaces/$K8S_NS/pods/$POD" | cut -c1-3)" 404 "the pod is gone"
t_eq "$(kube GET "/api/v1/namespaces/$K8S_NS/secrets/$POD" | cut -c1-3)" 404 "its secret too"
t_note "ok"
