# SPDX-License-Identifier: MIT
# The Kubernetes API stand-in for a test (sourced after tests/lib.sh and
# tests/lib-controller.sh): tests/fixtures/k8s-api.mjs on loopback over
# HTTPS with a CA this test makes with openssl, a bearer token, and a
# kubeconfig that names both; its pods run a real guestd each on a
# loopback IP of their own.  k8s_start exports what `rakazoctl serve
# --provider kubernetes` reads (KUBECONFIG, KUBERNETES_SANDBOX_*).  No
# real cluster is involved: what passes here passed the official schemas
# (npm kubernetes-models) and this stand-in's reading of the API.

K8S_NS=rakazo-test
K8S_TOKEN=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
K8S_LOG="$T/k8s-api.log"
K8S_DIR="$T/k8s"
K8S_PID=""
# Pod IPs: 127.A.B.n, A and B this test's, so parallel tests never meet.
K8S_IP_BASE="127.$((20 + RANDOM % 200)).$((1 + $$ % 250))"

# tests/k8s/node_modules from install-deps.sh, else a private npm ci.
k8s_modules() {
	t_npm_modules k8s kubernetes-models
	K8S_MODULES=$NPM_MODULES
}

# A CA and the server's certificate for 127.0.0.1, made for this test.
k8s_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=k8s-test-ca" \
	    -keyout "$T/k8s-ca.key" -out "$T/k8s-ca.crt" >/dev/null 2>&1 ||
		t_fail "openssl: the CA"
	openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
	    -keyout "$T/k8s-srv.key" -out "$T/k8s-srv.csr" >/dev/null 2>&1 ||
		t_fail "openssl: the server key"
	printf 'subjectAltName=IP:127.0.0.1\n' > "$T/k8s-srv.ext"
	openssl x509 -req -in "$T/k8s-srv.csr" -CA "$T/k8s-ca.crt" \
	    -CAkey "$T/k8s-ca.key" -CAcreateserial -days 2 \
	    -extfile "$T/k8s-srv.ext" -out "$T/k8s-srv.crt" >/dev/null 2>&1 ||
		t_fail "openssl: the server certificate"
	openssl req -newkey rsa:2048 -nodes -subj "/CN=rakazo-controller" \
	    -keyout "$T/k8s-client.key" -out "$T/k8s-client.csr" >/dev/null 2>&1 ||
		t_fail "openssl: the client key"
	openssl x509 -req -in "$T/k8s-client.csr" -CA "$T/k8s-ca.crt" \
	    -CAkey "$T/k8s-ca.key" -CAcreateserial -days 2 \
	    -out "$T/k8s-client.crt" >/dev/null 2>&1 ||
		t_fail "openssl: the client certificate"
}

# k8s_kubeconfig FILE [TOKEN]: a kubeconfig for the stand-in (TOKEN
# "cert": the client certificate instead, inline).
k8s_kubeconfig() {
	cat > "$1" <<EOF
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: other
  cluster:
    server: https://127.0.0.1:1
- name: stand-in
  cluster:
    server: https://127.0.0.1:$K8S_PORT
    certificate-authority-data: $(base64 -w0 < "$T/k8s-ca.crt")
contexts:
- name: test
  context:
    cluster: stand-in
    user: controller
    namespace: $K8S_NS
users:
- name: controller
  user:
EOF
	if [ "${2:-}" = cert ]; then
		printf '    client-certificate-data: %s\n    client-key-data: %s\n' \
		    "$(base64 -w0 < "$T/k8s-client.crt")" \
		    "$(base64 -w0 < "$T/k8s-client.key")" >> "$1"
	else
		printf '    token: %s\n' "${2:-$K8S_TOKEN}" >> "$1"
	fi
	chmod 600 "$1"
}

# k8s_start [FAULTS-JSON]: the stand-in, ready to answer.
k8s_start() {
	k8s_modules
	[ -f "$T/k8s-ca.crt" ] || k8s_ca
	mkdir -p "$K8S_DIR"
	rm -f "$T/k8s.port"
	node "$top_srcdir/tests/fixtures/k8s-api.mjs" --modules "$K8S_MODULES" \
	    --dir "$K8S_DIR" --guestd "$GUESTD" --token "$K8S_TOKEN" \
	    --cert "$T/k8s-srv.crt" --key "$T/k8s-srv.key" --ca "$T/k8s-ca.crt" \
	    --ip-base "$K8S_IP_BASE" --faults "${1:-{\}}" \
	    --port-file "$T/k8s.port" --log "$K8S_LOG" 2>"$T/k8s-api.err" &
	K8S_PID=$!
	T_KILL="$T_KILL $K8S_PID"
	_deadline=$(($(date +%s) + 30))
	while [ ! -s "$T/k8s.port" ]; do
		kill -0 "$K8S_PID" 2>/dev/null ||
			t_fail "the API stand-in died: $(cat "$T/k8s-api.err")"
		[ "$(date +%s)" -lt "$_deadline" ] ||
			t_fail "the API stand-in not ready in 30 s"
		sleep 0.05
	done
	K8S_PORT=$(cat "$T/k8s.port")
	k8s_kubeconfig "$T/kubeconfig"
	export KUBECONFIG="$T/kubeconfig"
	export SANDBOX_PROVIDER=kubernetes
	export KUBERNETES_SANDBOX_COMPUTER_IMAGE=rakazo-computer:test
	unset KUBERNETES_SANDBOX_NAMESPACE KUBERNETES_SANDBOX_POD_LABELS \
	    KUBERNETES_SANDBOX_POD_ANNOTATIONS KUBERNETES_SANDBOX_HOME_CLAIM \
	    KUBERNETES_SANDBOX_READY_TIMEOUT_MS
}

# k8s_stop: the stand-in and every guestd its pods run.
k8s_stop() {
	[ -n "$K8S_PID" ] || return 0
	kill "$K8S_PID" 2>/dev/null
	wait "$K8S_PID" 2>/dev/null
	K8S_PID=""
	for d in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null |
		    grep -q -- "--ready-file $K8S_DIR/"; then
			kill "${d#/proc/}" 2>/dev/null
		fi
	done
}

# kube METHOD PATH [JSON]: the API as the controller sees it; "STATUS BODY".
kube() {
	curl -s --cacert "$T/k8s-ca.crt" -o "$T/kube.out" -w '%{http_code}' \
	    -X "$1" -H "Authorization: Bearer $K8S_TOKEN" \
	    -H 'Content-Type: application/json' ${3+--data-binary "$3"} \
	    "https://127.0.0.1:$K8S_PORT$2" > "$T/kube.code"
	printf '%s %s\n' "$(cat "$T/kube.code")" "$(cat "$T/kube.out")"
}

# kube_pods: the computers' pods, one name a line.
kube_pods() {
	kube GET "/api/v1/namespaces/$K8S_NS/pods" >/dev/null
	jq -r '.items[].metadata.name' "$T/kube.out"
}

# k8s_test VERB/ARGS [JSON]: a test control of the stand-in.
k8s_test() {
	curl -s --cacert "$T/k8s-ca.crt" -X POST ${2+--data-binary "$2"} \
	    "https://127.0.0.1:$K8S_PORT/_test/$1"
}

# k8s_wait_log PATTERN SECS: until the stand-in logged a matching line.
k8s_wait_log() {
	_deadline=$(($(date +%s) + $2))
	until grep -q -- "$1" "$K8S_LOG" 2>/dev/null; do
		[ "$(date +%s)" -lt "$_deadline" ] ||
			t_fail "the API stand-in never logged $1"
		sleep 0.05
	done
}

k8s_cleanup() {
	rc=$?
	ctl_stop
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "---- k8s-api log ----" >&2
		tail -n 60 "$K8S_LOG" >&2 2>/dev/null
		cat "$T/k8s-api.err" >&2 2>/dev/null
		for l in "$K8S_DIR"/pods/*/guestd.log; do
			[ -f "$l" ] || continue
			echo "---- $l ----" >&2
			tail -n 20 "$l" >&2
		done
	fi
	k8s_stop
	(exit "$rc")
	ctl_cleanup
}
trap k8s_cleanup EXIT
