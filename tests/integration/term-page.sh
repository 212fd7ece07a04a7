#!/bin/bash
# SPDX-License-Identifier: MIT
# The terminal page (G-18, issue 7/8) in a real headless Chromium: see
# term-page.mjs for what a person using it must see.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/term-lib.sh"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser ||
    true)}
[ -n "$CHROMIUM" ] || { echo "# no chromium"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "# no node"; exit 77; }
[ -f "${TERM_ASSETS:-}/xterm/xterm.js" ] ||
	t_fail "no xterm.js in term-assets (run packaging/install-deps.sh)"
t_browser_modules
term_start
TOK_CONTROL=$(term_grant control)
TOK_VIEW=$(term_grant view)
GW="http://127.0.0.1:$GW"
printf '#!/bin/sh\nexec "%s" guest --url "%s" --secret-file "%s" call capability.revoke "{\\"token\\":\\"$1\\"}" >/dev/null\n' \
    "$RAKAZOCTL" "$URL" "$SECRET" >"$T/revoke"
chmod +x "$T/revoke"
REVOKE_CMD="$T/revoke"
export BROWSER_MODULES CHROMIUM GW TOK_CONTROL TOK_VIEW REVOKE_CMD
timeout 120 node "$top_srcdir/tests/integration/term-page.mjs" \
    >"$T/node.out" 2>&1
rc=$?
cat "$T/node.out"
[ "$rc" -eq 0 ] || t_fail "term-page.mjs exited $rc"
grep -q '^done$' "$T/node.out" || t_fail "term-page.mjs did not finish"
exit 0
