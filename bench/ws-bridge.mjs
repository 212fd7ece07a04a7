// SPDX-License-Identifier: MIT
// ws-bridge: a loopback TCP port in front of an RFB-over-websocket URL,
// so a native viewer (bench/rfb-tight-latency) reaches guestd's gateway
// or websockify the way noVNC does.  Each TCP connection gets its own
// websocket; binary messages both ways.  Prints PORT=N once listening.
//   node --experimental-websocket ws-bridge.mjs ws://HOST:PORT/PATH
// Needs Node 20.10 or later (the WebSocket client).
import net from 'node:net';

const url = process.argv[2];
if (!url || typeof WebSocket !== 'function') {
	console.error('usage: node --experimental-websocket ws-bridge.mjs URL');
	process.exit(2);
}
const srv = net.createServer((sock) => {
	sock.setNoDelay(true);
	const ws = new WebSocket(url, ['binary']);
	ws.binaryType = 'arraybuffer';
	const early = [];
	ws.onopen = () => {
		for (const b of early)
			ws.send(b);
		early.length = 0;
	};
	ws.onmessage = (ev) => sock.write(new Uint8Array(ev.data));
	ws.onclose = () => sock.destroy();
	ws.onerror = () => sock.destroy();
	sock.on('data', (b) => {
		if (ws.readyState === WebSocket.OPEN)
			ws.send(b);
		else
			early.push(b);
	});
	sock.on('close', () => ws.close());
	sock.on('error', () => ws.close());
});
srv.listen(0, '127.0.0.1', () => {
	console.log(`PORT=${srv.address().port}`);
});
