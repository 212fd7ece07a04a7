// SPDX-License-Identifier: MIT
// The browser half of term-page.sh: guestd's terminal page (/term.html,
// xterm.js from /xterm/ on the same port) in a real headless Chromium,
// driven by playwright-core.  A person's keystrokes reach the shell and its
// output shows in xterm.js; resizing the window resizes the PTY (stty
// size); UTF-8 survives both ways; a view token gets no terminal;
// revoking closes the page's terminal with the reason; nothing is loaded
// from anywhere but the gateway.
//
// Environment: BROWSER_MODULES (holds node_modules/playwright-core),
// CHROMIUM, GW (http://127.0.0.1:PORT), TOK_CONTROL, TOK_VIEW, REVOKE_CMD
// (argv, space-separated; the token is appended).
// Prints "ok <what>" lines and "done"; a failure prints "FAIL: ..." and
// exits 1.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';

const require = createRequire(process.env.BROWSER_MODULES + '/');
const { chromium } = require('playwright-core');
const GW = process.env.GW;
const WAIT_MS = 15000;

function fail(msg) {
	console.log('FAIL: ' + msg);
	process.exit(1);
}

function ok(msg) {
	console.log('ok ' + msg);
}

// The terminal's whole buffer as text.
async function screenText(page) {
	return page.evaluate(() => {
		const b = window.rakazoTerm.term.buffer.active;
		const out = [];
		for (let i = 0; i < b.length; i++)
			out.push(b.getLine(i).translateToString(true));
		return out.join('\n');
	});
}

async function waitText(page, needle, what) {
	const end = Date.now() + WAIT_MS;
	while (Date.now() < end) {
		if ((await screenText(page)).includes(needle))
			return;
		await page.waitForTimeout(50);
	}
	fail(what + ': "' + needle + '" not on screen: ' +
	    (await screenText(page)).slice(-400));
}

async function waitState(page, state, what) {
	try {
		await page.waitForFunction((s) =>
		    document.documentElement.dataset.state === s, state,
		    { timeout: WAIT_MS });
	} catch (e) {
		fail(what + ': state ' + await page.evaluate(() =>
		    document.documentElement.dataset.state));
	}
}

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM,
	args: ['--headless', '--no-sandbox', '--disable-gpu',
	    '--no-first-run', '--disable-background-networking',
	    '--disable-component-update', '--disable-sync'],
});
try {
	const page = await browser.newPage({
	    viewport: { width: 900, height: 500 } });
	const foreign = [];
	page.on('request', (r) => {
		if (!r.url().startsWith(GW) && !r.url().startsWith(
		    GW.replace('http:', 'ws:')))
			foreign.push(r.url());
	});
	await page.goto(GW + '/term.html?token=' + process.env.TOK_CONTROL);
	await waitState(page, 'connected', 'control token');
	ok('connected');

	await page.click('#term');
	await page.keyboard.type('echo PA""GE-$((6*7))\n');
	await waitText(page, 'PAGE-42', 'typed command');
	ok('keys reach the shell, output shows');

	await page.keyboard.type('echo "U""TF:h\u00e9llo \u2713 \u65e5\u672c"\n');
	await waitText(page, 'UTF:h\u00e9llo \u2713 \u65e5\u672c', 'UTF-8');
	ok('utf-8');

	await page.setViewportSize({ width: 640, height: 360 });
	await page.waitForFunction(() => window.rakazoTerm.term.cols < 80,
	    null, { timeout: WAIT_MS });
	const size = await page.evaluate(() => [window.rakazoTerm.term.rows,
	    window.rakazoTerm.term.cols]);
	await page.keyboard.type('echo S""Z=$(stty size)\n');
	await waitText(page, 'SZ=' + size[0] + ' ' + size[1], 'resize');
	ok('resize seen by stty size ' + size.join('x'));

	const view = await browser.newPage();
	await view.goto(GW + '/term.html?token=' + process.env.TOK_VIEW);
	await waitState(view, 'closed', 'view token');
	ok('view token refused');

	const argv = process.env.REVOKE_CMD.split(' ');
	execFileSync(argv[0], [...argv.slice(1), process.env.TOK_CONTROL]);
	await waitState(page, 'closed', 'revoke');
	await waitText(page, 'control capability ended', 'close reason shown');
	ok('revoked: closed with the reason');

	if (foreign.length > 0)
		fail('requests outside the gateway: ' + foreign.join(' '));
	ok('nothing from outside the gateway');
	console.log('done');
} finally {
	await browser.close();
}
