#!/bin/bash
# SPDX-License-Identifier: MIT
# G-19 on the desktop (issue 33): a local computer's uid from
# --local-uid-range has no passwd entry, yet every process guestd starts
# for it names the workspace user and finds its home through guestd's
# nss_wrapper files: the shell tool (whoami, id -un, getent, Python's
# getpass and pwd), the window manager, the browser, and an xterm that
# launch_app starts, whose prompt, read from the xterm's own screen (its
# print action, bound to a key pressed through computer_act), is
# "rakazo@HOST:~/bots/alice$", not "I have no name!".
# Needs root (serve hands out uids only as root), xterm and libnss-wrapper.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "# needs root"; exit 77; }
command -v xterm >/dev/null 2>&1 || { echo "# no xterm"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "# no Xvfb"; exit 77; }
lib=""
for d in /usr/lib/*-linux-gnu* /usr/lib64 /usr/lib /usr/local/lib; do
	[ -f "$d/libnss_wrapper.so" ] && lib="$d/libnss_wrapper.so" && break
done
[ -n "$lib" ] || { echo "# no libnss_wrapper.so (libnss-wrapper)"; exit 77; }
. "$top_srcdir/tests/lib-controller.sh"
sum=$(sha256sum /etc/passwd /etc/group)

ctl_start
ctl computer create a >/dev/null || t_fail "create a"
HOME_A="$CTL_DATA/computers/a/home"
sh_a() { ctl shell --computer a --bot alice -- "$1"; }
u=$(sh_a 'id -u') || t_fail "shell: $u"
[ "$u" -ne 0 ] || t_fail "the computer runs as root"
! getent passwd "$u" >/dev/null || t_fail "uid $u has a passwd entry here"

# The shell tool.
out=$(sh_a 'echo "W=$(whoami) $(id -un) $(id -gn)"') || t_fail "whoami: $out"
t_eq "$out" "W=rakazo rakazo rakazo" "the shell tool's names"
out=$(sh_a 'getent passwd "$(id -u)"') || t_fail "getent: $out"
t_eq "$out" "rakazo:x:$u:$u:rakazo:$HOME_A:/bin/bash" "the passwd entry"
# The system's own users keep their names.
t_eq "$(sh_a 'stat -c %U /')" root "the owner of /"
if [ -x /usr/bin/python3 ]; then
	out=$(sh_a '/usr/bin/python3 -c "import getpass; print(getpass.getuser())"')
	t_eq "$out" rakazo "getpass.getuser()"
	# Without LOGNAME and USER, getpass asks pwd, as pwd.getpwuid does.
	out=$(sh_a 'env -u LOGNAME -u USER /usr/bin/python3 -c "import getpass, os, pwd
print(getpass.getuser(), pwd.getpwuid(os.getuid()).pw_dir)"')
	t_eq "$out" "rakazo $HOME_A" "getpass and pwd without LOGNAME"
fi

# An xterm on the desktop, as an agent starts it.  Its print action
# writes its screen (plain text) to screen.txt in its cwd (bots/alice).
xrm="-xrm 'XTerm*printerCommand: cat >screen.txt'"
xrm="$xrm -xrm 'XTerm*printAttributes: 0'"
xrm="$xrm -xrm 'XTerm*VT100.translations: #override <Key>F5: print()'"
body=$(python3 -c 'import json, sys
print(json.dumps({"computer": "a", "bot": "alice", "command": sys.argv[1]}))' \
    "xterm -geometry 80x24+0+0 $xrm")
r=$(api POST /v1/tools/launch_app "$body")
t_contains "$r" "200 " "launch_app xterm"

# Bounded: until the shell's prompt is on the xterm's screen.  twm gives
# the keyboard to the window under the pointer.
screen="$HOME_A/bots/alice/screen.txt"
i=0
while ! grep -q '\$ *$' "$screen" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || t_fail "no prompt on the xterm's screen: $(cat "$screen" 2>&1)"
	api POST /v1/tools/computer_act '{"computer":"a","bot":"alice","actions":[{"kind":"move","x":200,"y":150},{"kind":"key","keys":"F5"}]}' >/dev/null
	sleep 0.1
done
prompt=$(grep '\$ *$' "$screen" | head -n 1 | sed 's/ *$//')
t_note "xterm's prompt: $prompt"
t_not_contains "$prompt" "I have no name" "the xterm's prompt"
t_eq "$prompt" "rakazo@$(hostname):~/bots/alice\$" "the xterm's prompt"

# The xterm's shell and the window manager carry the same files.
xt=$(pgrep -u "$u" -x xterm | head -n 1)
[ -n "$xt" ] || t_fail "no xterm of uid $u"
sh=$(pgrep -P "$xt" | head -n 1)
[ -n "$sh" ] || t_fail "the xterm has no shell"
wm=$(pgrep -u "$u" -x twm | head -n 1)
for p in "$sh" "$wm"; do
	[ -n "$p" ] || continue
	env=$(tr '\0' '\n' <"/proc/$p/environ")
	t_contains "$env" "LD_PRELOAD=$lib" "$(cat "/proc/$p/comm")'s preload"
	f=$(printf '%s\n' "$env" | sed -n 's/^NSS_WRAPPER_PASSWD=//p')
	[ -n "$f" ] || t_fail "$(cat "/proc/$p/comm") has no NSS_WRAPPER_PASSWD"
	t_contains "$(cat "$f")" "rakazo:x:$u:$u:rakazo:$HOME_A:/bin/bash" \
	    "$(cat "/proc/$p/comm")'s passwd file"
done
# The browser guestd starts on that desktop, where there is one.
if command -v "${GUESTD_BROWSER:-chromium}" >/dev/null 2>&1; then
	out=$(ctl_guest a browser.open '{"bot":"alice"}')
	bp=$(printf '%s' "$out" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
	[ -n "$bp" ] || t_fail "browser.open: $out"
	env=$(tr '\0' '\n' <"/proc/$bp/environ")
	t_contains "$env" "LD_PRELOAD=$lib" "the browser's preload"
	t_contains "$env" "NSS_WRAPPER_PASSWD=$f" "the browser's passwd file"
fi
t_eq "$(sha256sum /etc/passwd /etc/group)" "$sum" "/etc/passwd unchanged"

# The files go with guestd.
[ -f "$f" ] || t_fail "no passwd file while guestd runs"
ctl computer stop a >/dev/null || t_fail "stop a"
[ ! -e "$f" ] || t_fail "the passwd file outlived guestd"
exit 0
