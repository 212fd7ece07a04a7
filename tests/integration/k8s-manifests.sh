#!/bin/bash
# SPDX-License-Identifier: MIT
# The operator files in packaging/kubernetes/ (SPEC P-3): every object in
# them validates against the official Kubernetes schemas (npm
# kubernetes-models, as the API stand-in uses), and they keep their
# promises to each other (tests/fixtures/k8s-manifests.mjs): least verbs,
# one service account, only the controller reaching guestd.  A broken
# file fails the test; so does the checker when given one.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_modules
M="$top_srcdir/packaging/kubernetes"
set -- "$M"/*.yaml
[ "$#" -ge 4 ] || t_fail "no manifests in packaging/kubernetes"
node "$top_srcdir/tests/fixtures/k8s-manifests.mjs" "$K8S_MODULES" "$@" \
    >"$T/check.out" 2>&1 || t_fail "manifests: $(cat "$T/check.out")"
t_contains "$(cat "$T/check.out")" "Deployment/rakazo-controller" "the Deployment checked"
t_contains "$(cat "$T/check.out")" "NetworkPolicy/rakazo-computers" "the NetworkPolicy checked"

# The checker refuses what a cluster would: a port that is no number, a
# verb more than the provider needs.
sed 's/containerPort: 8420/containerPort: api/' "$M/deployment.yaml" > "$T/bad-port.yaml"
node "$top_srcdir/tests/fixtures/k8s-manifests.mjs" "$K8S_MODULES" \
    "$M/namespace.yaml" "$M/serviceaccount.yaml" "$M/rbac.yaml" \
    "$M/networkpolicy.yaml" "$T/bad-port.yaml" >"$T/bad.out" 2>&1 &&
	t_fail "a string containerPort passed"
t_contains "$(cat "$T/bad.out")" "containerPort must be integer" "the schema's words"
sed 's/verbs: \["create", "get", "delete"\]/verbs: ["create", "get", "delete", "list"]/' \
    "$M/rbac.yaml" > "$T/bad-rbac.yaml"
node "$top_srcdir/tests/fixtures/k8s-manifests.mjs" "$K8S_MODULES" \
    "$M/namespace.yaml" "$M/serviceaccount.yaml" "$T/bad-rbac.yaml" \
    "$M/networkpolicy.yaml" "$M/deployment.yaml" >"$T/bad.out" 2>&1 &&
	t_fail "an extra verb passed"
t_contains "$(cat "$T/bad.out")" "Role rules" "more verbs than used"
t_note "ok"
