#!/bin/bash
# SPDX-License-Identifier: MIT
# The kubernetes provider (SPEC P-2) against the API stand-in: readiness
# comes through a watch, and when the server ends the watch before the
# pod is Ready the provider resumes it from the last resourceVersion it
# saw (the Ready change made while no watch was open is replayed, not
# missed); when that version has expired (410, history compacted) it
# lists the pod again and watches from the list's version.  No polling:
# one watch per drop, no repeated GETs.  A watch the server refuses for a
# while (503, 429) is tried again until the ready deadline.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"
. "${top_srcdir:-.}/tests/lib-k8s.sh"

k8s_start '{"dropWatches":2,"dropAfterMs":100,"readyDelayMs":600}'
ctl_start

api POST /v1/computers '{"id":"w1"}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"w1","bot":"alice","command":"echo through the drops"}')
t_contains "$r" 'through the drops' "ready after two dropped watches"
t_eq "$(grep -c '^DROP-WATCH' "$K8S_LOG")" 2 "the server dropped two watches"
n=$(grep -c '^WATCH /api/v1/namespaces/rakazo-test/pods?watch=1&fieldSelector=metadata.name%3Drakazo-w1-' "$K8S_LOG")
t_eq "$n" 3 "one watch, resumed twice"
# Each resumed watch starts at a version at least the first one's.
first=$(grep -o 'resourceVersion=[0-9]*' "$K8S_LOG" | head -1 | cut -d= -f2)
for v in $(grep -o 'resourceVersion=[0-9]*' "$K8S_LOG" | cut -d= -f2); do
	[ "$v" -ge "$first" ] || t_fail "a watch went back to version $v"
done
grep -q 'kubernetes.watch_resumed' "$CTL_LOG" || t_fail "no resume logged"
t_eq "$(grep -c '^GET /api/v1/namespaces/rakazo-test/pods\(/\|?fieldSelector\)' "$K8S_LOG")" 0 \
    "resuming needs no GET"

# Expired: the resumed watch is refused 410, so the pod is read again.
api POST /v1/computers/w1/stop '{}' >/dev/null
: > "$K8S_LOG"
k8s_test faults '{"dropWatches":1,"dropAfterMs":100,"readyDelayMs":600,"compactOnDrop":true}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"w1","bot":"alice","command":"echo after expiry"}')
t_contains "$r" 'after expiry' "ready after a 410"
t_eq "$(grep -c '^GET /api/v1/namespaces/rakazo-test/pods?fieldSelector=metadata.name%3Drakazo-w1-' "$K8S_LOG")" 1 \
    "one list after the 410"
t_eq "$(grep -c '^WATCH ' "$K8S_LOG")" 3 "the dropped, the refused and the fresh watch"

# The API server answering 503, then 429, to the watch (restarting, or
# throttling): the wait tries again with backoff instead of failing the
# call, and is not sent as a list instead.
api POST /v1/computers/w1/stop '{}' >/dev/null
: > "$K8S_LOG"
k8s_test faults '{"dropWatches":0,"compactOnDrop":false,"readyDelayMs":600,"failNext":{"watch pods":[503,429,503]}}' >/dev/null
r=$(api POST /v1/tools/shell '{"computer":"w1","bot":"alice","command":"echo through 503"}')
t_contains "$r" 'through 503' "ready after a watch refused three times"
t_eq "$(grep -c '^GET [^ ]*watch=1[^ ]* 503$' "$K8S_LOG")" 2 "two watches answered 503"
t_eq "$(grep -c '^GET [^ ]*watch=1[^ ]* 429$' "$K8S_LOG")" 1 "one watch answered 429"
t_eq "$(grep -c 'kubernetes.retry' "$CTL_LOG")" 3 "each retry logged"
t_note "ok"
