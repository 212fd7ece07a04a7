# SPDX-License-Identifier: MIT
# Shared set-up of the terminal tests (sourced after tests/lib.sh): a
# guestd with its gateway and the terminal page, an Xvfb display for bot
# alice (capabilities need one), and helpers.
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
: "${TERMPROBE:?run through make check}"
# Session files land here, so a test can see them go.
mkdir -p "$T/tmp"
chmod 1777 "$T/tmp"
# guestd reads the page's files on each request, as the user it runs as
# (nobody, when the tests run as root): a checkout in a private home
# (/root is mode 0700) is out of that user's reach, so guestd gets a copy
# in this test's own dir, which it can read.
if [ "$(id -u)" -eq 0 ] && [ -d "${TERM_ASSETS:-}" ]; then
	cp -R "$TERM_ASSETS" "$T/term-assets"
	chmod -R a+rX "$T/term-assets"
	TERM_ASSETS="$T/term-assets"
fi

# term_start [guestd args...]
term_start() {
	TMPDIR="$T/tmp" t_start_guestd --gateway 127.0.0.1:0 \
	    --term-assets "${TERM_ASSETS:-$T/none}" "$@"
	GW=$(sed -n 's/.*event=gateway.listening .*port=\([0-9]*\).*/\1/p' \
	    "$GUESTD_LOG" | head -n 1)
	[ -n "$GW" ] || t_fail "gateway did not listen"
	out=$(rk call display.open \
	    '{"bot":"alice","width":320,"height":240}') || t_fail "open: $out"
}

# term_grant policy [ttl]: prints the token.
term_grant() {
	if [ -n "${2:-}" ]; then
		g=$(rk call capability.grant \
		    "{\"bot\":\"alice\",\"policy\":\"$1\",\"ttl\":$2}")
	else
		g=$(rk call capability.grant \
		    "{\"bot\":\"alice\",\"policy\":\"$1\"}")
	fi || t_fail "grant: $g"
	printf '%s' "$g" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}

# term_probe TOKEN < script: run termprobe against /term/TOKEN.
term_probe() {
	"$TERMPROBE" --url "ws://127.0.0.1:$GW/term/$1"
}

# term_open NAME TOKEN: a long-lived probe; script lines go to fd
# ${NAME}_IN, output lines come from fd ${NAME}_OUT.
term_open() {
	mkfifo "$T/$1.in" "$T/$1.out"
	"$TERMPROBE" --url "ws://127.0.0.1:$GW/term/$2" <"$T/$1.in" \
	    >"$T/$1.out" 2>&1 &
	T_KILL="$T_KILL $!"
	eval "${1}_PID=\$!"
	eval "exec {${1}_IN}>\"\$T/\$1.in\" {${1}_OUT}<\"\$T/\$1.out\""
	term_line "$1" >/dev/null
}

# term_say NAME LINE: one script line to the probe.
term_say() {
	eval "printf '%s\n' \"\$2\" >&\$${1}_IN"
}

# term_line NAME: the probe's next output line (10 s max).
term_line() {
	eval "read -t 15 -r l <&\$${1}_OUT" || t_fail "$1: no output"
	printf '%s\n' "$l"
}

# term_pid NAME: the probe's shell pid.
term_pid() {
	term_say "$1" 'send echo P""ID=$$\r'
	term_say "$1" 'grab PID='
	l=$(term_line "$1")
	case "$l" in
	"grab PID="[0-9]*) printf '%s\n' "${l#grab PID=}" ;;
	*) t_fail "$1: no pid: $l" ;;
	esac
}

# term_gone PID: true once PID no longer exists (5 s max).
term_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 250 ] || return 1
		sleep 0.02
	done
	return 0
}
