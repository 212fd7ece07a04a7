# SPDX-License-Identifier: MIT
# A bare websocket client of guestd's /control for the hostile tests: it
# sends exactly what a test says (pipelined requests it never reads,
# frames on the wrong channel) over one TCP socket, with no manners.
# Imported by the scripts' inline python3 (sys.path has this directory).

import base64
import json
import os
import socket
import struct
import time

SUBPROTOCOL = "rakazo-control.v1"


class Closed(Exception):
    pass


class Conn:
    def __init__(self, port, secret, timeout=30.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout)
        self.s.settimeout(timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET /control HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Protocol: %s\r\n"
               "Authorization: Bearer %s\r\n\r\n" %
               (port, key, SUBPROTOCOL, secret))
        self.s.sendall(req.encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            d = self.s.recv(4096)
            if not d:
                raise Closed("handshake")
            self.buf += d
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise Closed(head.split(b"\r\n")[0].decode())

    @staticmethod
    def frame(opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            h = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            h = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            h = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        m = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return h + mask + m

    def send_raw(self, data):
        self.s.sendall(data)

    def send_json(self, obj):
        self.s.sendall(self.frame(1, json.dumps(obj).encode()))

    def send_bin(self, rid, channel, flags, payload=b""):
        hdr = struct.pack("!IBB", rid, channel, flags)
        self.s.sendall(self.frame(2, hdr + payload))

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise Closed("eof")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """('text', obj) or ('bin', id, channel, flags, payload)."""
        msg = b""
        while True:
            b0, b1 = self._need(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack("!H", self._need(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._need(8))[0]
            op = b0 & 0x0f
            data = self._need(n)
            if op == 8:
                raise Closed("close frame")
            if op in (9, 10):
                continue
            if op != 0:
                kind = op
            msg += data
            if b0 & 0x80:
                break
        if kind == 1:
            return ("text", json.loads(msg))
        rid, ch, fl = struct.unpack("!IBB", msg[:6])
        return ("bin", rid, ch, fl, msg[6:])

    def reply(self, rid, data=None):
        """The reply to request rid; binary frames of rid go to data."""
        while True:
            m = self.recv()
            if m[0] == "bin":
                if data is not None and m[1] == rid:
                    data.append(m[4])
                continue
            o = m[1]
            if "event" in o:
                continue
            if o.get("id") == rid:
                return o

    def reply_any(self):
        """The next response (a text message that is not an event)."""
        while True:
            m = self.recv()
            if m[0] == "text" and "event" not in m[1]:
                return m[1]

    def call(self, rid, op, args=None, data=None):
        self.send_json({"id": rid, "op": op, "args": args or {}})
        return self.reply(rid, data)

    def hello(self):
        r = self.call(1, "hello", {"version": 1, "client": "hostile"})
        assert r.get("ok"), r
        return r

    def close(self):
        self.s.close()


def connect(port, secret_file, hello=True):
    with open(secret_file) as f:
        secret = f.read().strip()
    c = Conn(int(port), secret)
    if hello:
        c.hello()
    return c


def proc_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def proc_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_until(cond, timeout=20.0, step=0.05):
    """Poll cond() until true or the deadline; returns its last value."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def tcp_rx_queue(local_port, remote_port):
    """Bytes waiting unread in the socket 127.0.0.1:local_port that is
    connected to remote_port (from /proc/net/tcp); None when absent."""
    want_l = "0100007F:%04X" % local_port
    want_r = "0100007F:%04X" % remote_port
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            p = line.split()
            if p[1] == want_l and p[2] == want_r:
                return int(p[4].split(":")[1], 16)
    return None
