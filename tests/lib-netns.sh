# SPDX-License-Identifier: MIT
# A remote peer for tests (sourced after lib.sh): a network namespace of
# this test's own, joined to the host by a veth pair.  The host end gets
# NETNS_HOST (x.y.z.1), the namespace end NETNS_PEERS (x.y.z.2 and up, as
# many as asked), so what runs under `netns_exec` comes from addresses
# that are neither loopback nor the host's.  netns_down removes it all;
# a test calls it from its EXIT trap.
#
# netns_up N: 0, or 77 when this machine cannot (not root, no `ip`).

NETNS_NAME=""
NETNS_HOST=""
NETNS_PEERS=""

netns_up() {
	_n=${1:-1}
	[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null 2>&1 || return 77
	NETNS_NAME="rkz$$"
	# A /24 of 10.0.0.0/8 no interface here has yet.
	for _try in 1 2 3 4 5 6 7 8; do
		_net="10.$((100 + RANDOM % 100)).$((RANDOM % 250))"
		ip -4 -o addr | grep -q " $_net\." || break
	done
	ip netns add "$NETNS_NAME" || return 77
	if ! ip link add "v$NETNS_NAME" type veth peer name "p$NETNS_NAME" ||
	    ! ip link set "p$NETNS_NAME" netns "$NETNS_NAME"; then
		netns_down
		return 77
	fi
	NETNS_HOST="$_net.1"
	ip addr add "$NETNS_HOST/24" dev "v$NETNS_NAME" &&
	    ip link set "v$NETNS_NAME" up &&
	    ip netns exec "$NETNS_NAME" ip link set lo up &&
	    ip netns exec "$NETNS_NAME" ip link set "p$NETNS_NAME" up ||
	    { netns_down; return 1; }
	NETNS_PEERS=""
	for _i in $(seq 2 $((_n + 1))); do
		ip netns exec "$NETNS_NAME" ip addr add "$_net.$_i/24" \
		    dev "p$NETNS_NAME" || { netns_down; return 1; }
		NETNS_PEERS="$NETNS_PEERS $_net.$_i"
	done
	NETNS_PEERS=${NETNS_PEERS# }
	return 0
}

netns_exec() {
	ip netns exec "$NETNS_NAME" "$@"
}

netns_down() {
	[ -n "$NETNS_NAME" ] || return 0
	# The namespace's end goes with it, and the host's end with its peer.
	ip link del "v$NETNS_NAME" 2>/dev/null
	ip netns del "$NETNS_NAME" 2>/dev/null
	NETNS_NAME=""
}
