// SPDX-License-Identifier: MIT
// The baseline of bench/browser-page.sh: playwright-core connected over
// CDP to the same bot browser guestd runs, doing the equivalent work on
// the same tab: an accessibility-style snapshot (ariaSnapshot of the
// body) and a click on the same button.  Prints a JSON line.
//
//   node page-playwright.mjs CDP-PORT URL-PREFIX N
import { createRequire } from 'node:module';
const require = createRequire(process.env.PW_REQUIRE_FROM);
const { chromium } = require('playwright-core');

const [port, prefix, nstr] = process.argv.slice(2);
const n = Math.max(5, parseInt(nstr, 10));
const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];

const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`);
const page = browser.contexts().flatMap((c) => c.pages())
    .find((p) => p.url().startsWith(prefix));
if (!page) {
	console.error('no page at', prefix);
	process.exit(1);
}
const snap = [], click = [];
let size = 0;
for (let i = 0; i < n; i++) {
	const t0 = performance.now();
	const s = await page.locator('body').ariaSnapshot();
	snap.push((performance.now() - t0) * 1000);
	size = s.length;
}
for (let i = 0; i < n; i++) {
	const t0 = performance.now();
	await page.click('#b40');
	click.push((performance.now() - t0) * 1000);
}
console.log(JSON.stringify({ snapshot_us: Math.round(median(snap)),
    act_us: Math.round(median(click)), snapshot_chars: size }));
// Leave without closing: the browser is the bot's, not ours.
process.exit(0);
