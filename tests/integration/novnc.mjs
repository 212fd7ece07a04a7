// SPDX-License-Identifier: MIT
// The browser half of screen-novnc.sh: stock noVNC (Debian's package,
// served by the gateway from --novnc) in a real headless Chromium, driven by
// playwright-core.  It opens the gateway's /embed.html inside an iframe of a
// parent page and checks what a person embedding it would see: the states
// posted to the parent, the pixels of the test pattern, input through a
// control token, nothing through a view token, refused tokens, revocation,
// VideoDecoder gone before noVNC runs, and Cache-Control: no-transform on
// every HTTP and websocket response of the gateway.
//
// Environment (set by screen-novnc.sh):
//   NOVNC_MODULES   directory holding node_modules/playwright-core
//   CHROMIUM        the browser binary
//   GW              http://127.0.0.1:PORT of the gateway
//   TOK_PATTERN     control token of the display showing xpattern (640x480)
//   TOK_REC_VIEW    view token of the display running xinput-recorder
//   TOK_REC_CONTROL control token of that display
//   TOK_REVOKE      view token of the pattern display, revoked while shown
//   BAD_TOKENS      space-separated tokens that must be refused
//   REVOKE_CMD      command (argv, space-separated) to which the JSON
//                   arguments of capability.revoke are appended
//   NOVNC_DEBUG     set: noVNC's debug log and the pages' console here
//
// Prints "ok <what>" lines and ends with "done"; any failure prints
// "FAIL: ..." and exits 1.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';

const require = createRequire(process.env.NOVNC_MODULES + '/');
const { chromium } = require('playwright-core');

const GW = process.env.GW;
const STATE_MS = 15000;

function fail(msg) {
	console.log('FAIL: ' + msg);
	process.exit(1);
}

function ok(msg) {
	console.log('ok ' + msg);
}

// Every response of the gateway, HTTP or websocket, with its headers.
const responses = [];

async function watchResponses(page) {
	page.on('response', (r) => {
		if (r.url().startsWith(GW))
			responses.push({ url: r.url(), status: r.status(),
			    headers: r.headers() });
	});
	// Websocket upgrades are not "responses" to playwright; CDP sees them
	// for the page and its same-origin iframes.
	const cdp = await page.context().newCDPSession(page);
	await cdp.send('Network.enable');
	cdp.on('Network.webSocketHandshakeResponseReceived', (e) => {
		const h = {};
		for (const [k, v] of Object.entries(e.response.headers))
			h[k.toLowerCase()] = v;
		responses.push({ url: 'ws', status: e.response.status,
		    headers: h });
	});
}

// Open /embed.html?<query> in a new iframe of the parent page; returns its
// index.  The parent records every state message of each iframe.
async function embed(page, query) {
	return page.evaluate((q) => window.openEmbed('/embed.html?' + q),
	    query);
}

async function states(page, i) {
	return page.evaluate((n) => window.states[n].map((s) => s.state), i);
}

// The same with each state's detail, for a failure's message.
async function statesDetailed(page, i) {
	return page.evaluate((n) => window.states[n].map((s) =>
	    s.detail ? s.state + ' (' + s.detail + ')' : s.state), i);
}

// Wait until iframe i has posted a state in want; returns its states.
async function waitState(page, i, want) {
	try {
		await page.waitForFunction(([n, w]) => window.states[n].some(
		    (s) => w.includes(s.state)), [i, want],
		    { timeout: STATE_MS, polling: 20 });
	} catch (e) {
		fail(`iframe ${i}: no state in ${want}: ` +
		    JSON.stringify(await states(page, i)));
	}
	return states(page, i);
}

function frameOf(page, i) {
	const f = page.frames().find((fr) => fr.name() === 'embed' + i);
	if (f === undefined)
		fail('no frame embed' + i);
	return f;
}

function expectStates(got, want, what) {
	if (JSON.stringify(got) !== JSON.stringify(want))
		fail(`${what}: states ${JSON.stringify(got)}, want ` +
		    JSON.stringify(want));
	ok(what + ': ' + got.join(' '));
}

// Pixels as the page shows them: a screenshot of noVNC's canvas, decoded
// by the browser itself.  Returns [r, g, b] at each point.
async function shotPixels(page, frame, points) {
	const png = await frame.locator('#screen canvas').first().screenshot();
	return page.evaluate(async ([b64, pts]) => {
		const img = new Image();
		img.src = 'data:image/png;base64,' + b64;
		await img.decode();
		const c = document.createElement('canvas');
		c.width = img.width;
		c.height = img.height;
		const ctx = c.getContext('2d');
		ctx.drawImage(img, 0, 0);
		return { w: img.width, h: img.height, px: pts.map(([x, y]) =>
		    Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3))) };
	}, [png.toString('base64'), points]);
}

function near(a, b) {
	return a.every((v, k) => Math.abs(v - b[k]) <= 8);
}

async function checkPattern(page) {
	const want = [
		[[160, 120], [255, 0, 0]], [[480, 120], [0, 255, 0]],
		[[160, 360], [0, 0, 255]], [[480, 360], [255, 255, 255]],
		[[20, 20], [255, 0, 0]], [[620, 460], [255, 255, 255]],
	];
	const i = await embed(page, 'scale=0&token=' +
	    encodeURIComponent(process.env.TOK_PATTERN));
	const got = await waitState(page, i, ['connected', 'failed']);
	expectStates(got, ['loading', 'connecting', 'connected'],
	    'control token states');
	const frame = frameOf(page, i);
	// VideoDecoder: present in this browser, gone in the embed page, and
	// already gone when noVNC's module ran (see the route in main()).
	if (!await page.evaluate(() => 'VideoDecoder' in window))
		fail('this Chromium has no VideoDecoder: the check proves nothing');
	if (await frame.evaluate(() => 'VideoDecoder' in window))
		fail('VideoDecoder still in the embed page');
	if (await frame.evaluate(() => window.rakazoVideoDecoderAtNoVNC) !==
	    false)
		fail('VideoDecoder was there when noVNC loaded');
	ok('VideoDecoder removed before noVNC loaded');
	// The first update may still be on its way: look until it matches.
	const end = Date.now() + STATE_MS;
	let last;
	for (;;) {
		last = await shotPixels(page, frame, want.map((w) => w[0]));
		if (last.w === 640 && last.h === 480 &&
		    want.every((w, k) => near(last.px[k], w[1])))
			break;
		if (Date.now() > end)
			fail('pattern pixels: ' + JSON.stringify(last));
		await page.waitForTimeout(50);
	}
	ok('pattern pixels ' + last.w + 'x' + last.h + ' ' +
	    JSON.stringify(last.px.slice(0, 4)));
	await page.evaluate((n) => window.closeEmbed(n), i);
}

// Click at (x, y) of the remote screen and type text, then disconnect.
async function pokeAndType(page, token, x, y, text, what) {
	const i = await embed(page, 'scale=0&token=' +
	    encodeURIComponent(token));
	const got = await waitState(page, i, ['connected', 'failed']);
	expectStates(got, ['loading', 'connecting', 'connected'], what);
	const frame = frameOf(page, i);
	const canvas = frame.locator('#screen canvas').first();
	await canvas.waitFor();
	const box = await canvas.boundingBox();
	await page.mouse.move(box.x + x, box.y + y);
	await page.mouse.down();
	await page.mouse.up();
	await page.keyboard.type(text, { delay: 20 });
	// Disconnecting flushes nothing new: noVNC sent each event at once.
	// A round trip through the page makes sure the events left it.
	await frame.evaluate(() => new Promise((r) => setTimeout(r, 0)));
	await page.evaluate((n) => window.closeEmbed(n), i);
	await waitState(page, i, ['disconnected']);
	ok(what + ' clicked at ' + x + ',' + y + ' and typed ' + text);
}

async function checkRefused(page) {
	for (const t of process.env.BAD_TOKENS.split(' ').filter((s) => s)) {
		const i = await embed(page, 'token=' + encodeURIComponent(t));
		const got = await waitState(page, i, ['connected', 'failed']);
		if (JSON.stringify(got) !== JSON.stringify(['loading',
		    'connecting', 'failed']))
			fail('refused token #' + i + ': states ' +
			    JSON.stringify(await statesDetailed(page, i)));
		expectStates(got, ['loading', 'connecting', 'failed'],
		    'refused token #' + i);
	}
	const i = await embed(page, 'scale=0');
	const got = await waitState(page, i, ['connected', 'failed']);
	expectStates(got, ['loading', 'failed'], 'no token');
}

async function checkRevoke(page) {
	const tok = process.env.TOK_REVOKE;
	const i = await embed(page, 'token=' + encodeURIComponent(tok));
	await waitState(page, i, ['connected', 'failed']);
	const argv = process.env.REVOKE_CMD.split(' ');
	const t0 = Date.now();
	execFileSync(argv[0], [...argv.slice(1),
	    JSON.stringify({ token: tok })], { stdio: 'ignore' });
	const got = await waitState(page, i, ['disconnected', 'failed']);
	expectStates(got, ['loading', 'connecting', 'connected',
	    'disconnected'], 'revoked while shown');
	ok('revoke seen by the page after ' + (Date.now() - t0) + ' ms');
	const j = await embed(page, 'token=' + encodeURIComponent(tok));
	expectStates(await waitState(page, j, ['connected', 'failed']),
	    ['loading', 'connecting', 'failed'], 'revoked token refused');
}

function checkHeaders() {
	let n = 0, ws = 0;
	for (const r of responses) {
		const cc = r.headers['cache-control'] || '';
		if (!cc.split(',').map((s) => s.trim()).includes('no-transform'))
			fail(`no Cache-Control: no-transform on ${r.url} ` +
			    `(${r.status}): ${JSON.stringify(r.headers)}`);
		n++;
		if (r.url === 'ws')
			ws++;
	}
	if (ws === 0 || n < 4)
		fail(`too few responses seen (${n}, ${ws} websocket)`);
	ok(`Cache-Control: no-transform on all ${n} responses (${ws} ` +
	    'websocket)');
}

async function main() {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM,
		args: ['--headless', '--no-sandbox', '--disable-gpu',
		    '--no-first-run', '--disable-background-networking',
		    '--disable-component-update', '--disable-sync'],
	});
	try {
		const context = await browser.newContext({
		    viewport: { width: 800, height: 640 } });
		const page = await context.newPage();
		page.on('pageerror', (e) => console.log('# page error: ' + e));
		if (process.env.NOVNC_DEBUG)
			page.on('console', (m) => console.log('# console: ' +
			    m.text()));
		await watchResponses(page);
		// Record whether VideoDecoder existed when noVNC's module ran.
		await context.route(GW + '/novnc/core/rfb.js', async (route) => {
			const r = await route.fetch();
			let body = 'window.rakazoVideoDecoderAtNoVNC = ' +
			    "('VideoDecoder' in window);\n" + await r.text();
			if (process.env.NOVNC_DEBUG)
				body = "import * as rakazoLog from './util/logging.js';\n" +
				    "rakazoLog.initLogging('debug');\n" + body;
			await route.fulfill({ response: r, body });
		});
		await page.goto(GW + '/parent.html');
		await checkPattern(page);
		await pokeAndType(page, process.env.TOK_REC_VIEW, 100, 100, 'q',
		    'view token');
		await pokeAndType(page, process.env.TOK_REC_CONTROL, 200, 150,
		    'hi', 'control token');
		await checkRefused(page);
		await checkRevoke(page);
		checkHeaders();
	} finally {
		await browser.close();
	}
	console.log('done');
}

main().catch((e) => fail(e.stack || String(e)));
