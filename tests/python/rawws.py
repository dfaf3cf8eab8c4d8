"""A deliberately minimal WebSocket client over a plain socket, for sending what real clients
never send: invalid UTF-8 text, binary and fragmented messages, bad headers, forbidden opcodes."""
import base64
import os
import socket
import struct

TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class RawWS:
    def __init__(self, host, port, subprotocol="graphql-transport-ws", path="/graphql", timeout=5):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Protocol: {subprotocol}\r\n\r\n")
        self.sock.sendall(request.encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"closed during the handshake: {self.buf!r}")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ", 2)[1])

    def frame(self, opcode, payload=b"", fin=True, mask=True, rsv=0, length=None):
        """Sends one frame; `length` overrides the length field (for lying headers)."""
        self.sock.sendall(self.frame_bytes(opcode, payload, fin, mask, rsv, length))

    def frame_bytes(self, opcode, payload=b"", fin=True, mask=True, rsv=0, length=None):
        """The bytes of one frame (to send several in one write)."""
        if isinstance(payload, str):
            payload = payload.encode()
        n = len(payload) if length is None else length
        header = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
        m = 0x80 if mask else 0
        if n < 126:
            header += bytes([m | n])
        elif n < 65536:
            header += bytes([m | 126]) + struct.pack("!H", n)
        else:
            header += bytes([m | 127]) + struct.pack("!Q", n)
        if mask:
            key = os.urandom(4)
            header += key
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        return header + payload

    def text(self, payload):
        self.frame(TEXT, payload)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_frame(self):
        """(opcode, payload) of the next frame from the server (servers never mask)."""
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        return b0 & 0x0F, self._read(n)

    def recv(self):
        """The next data message as text, or ("close", code, reason) for a close frame."""
        while True:
            opcode, payload = self.recv_frame()
            if opcode == CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return ("close", code, payload[2:].decode("utf-8", "replace"))
            if opcode == PING:
                self.frame(PONG, payload)
                continue
            if opcode == PONG:
                return ("pong", payload)
            return payload.decode("utf-8", "replace")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
