"""A server that delays each phase of an answer by a known amount, for the request-phase tests.

Run as its own process (``python phase_server.py '<json>'``), so that its sleeps and
stamps share no interpreter lock with the client under test; its stamps are
``time.perf_counter_ns`` (CLOCK_MONOTONIC, the client's clock too). It prints
``port <n>`` once listening, then one ``<what> <ns>`` line per act, flushed:
``accepted``, ``handshaken`` (TLS), ``status_line`` and ``head`` (stamped just
before the write that ends that phase for the client).

Settings (JSON): ``tls`` ([cert, key] or null), ``backlog``, ``block_s`` (leave one
connection of the server's own unaccepted that long: the accept queue, of
``listen(0)``, is full meanwhile), and the delays ``tls_s`` (after the accept,
before the handshake), ``first_s`` (after the request, before the status line),
``head_s`` (before the rest of the header block), ``token_s`` (before the events).
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from typing import Any

EVENTS = b'data: {"choices":[{"text":" t","finish_reason":"length"}]}\n\ndata: [DONE]\n\n'
_out = threading.Lock()


def say(what: str, value: int) -> None:
    with _out:
        print(what, value, flush=True)


def answer(conn: socket.socket, d: dict[str, Any]) -> None:
    time.sleep(d.get("first_s", 0.0))
    say("status_line", time.perf_counter_ns())
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    time.sleep(d.get("head_s", 0.0))
    say("head", time.perf_counter_ns())
    conn.sendall(b"content-type: text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(EVENTS))
    time.sleep(d.get("token_s", 0.0))
    conn.sendall(EVENTS)


def serve_one(conn: socket.socket, d: dict[str, Any], tls: ssl.SSLContext | None) -> None:
    if tls is not None:
        time.sleep(d.get("tls_s", 0.0))
        conn = tls.wrap_socket(conn, server_side=True)
        say("handshaken", time.perf_counter_ns())
    with conn:
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, _, buf = buf.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(buf) < length:
                buf += conn.recv(65536)
            buf = buf[length:]
            answer(conn, d)


def main() -> None:
    d = json.loads(sys.argv[1])
    tls = None
    if d.get("tls"):
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(*d["tls"])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(d.get("backlog", 16))
    port = sock.getsockname()[1]
    blocker = socket.create_connection(("127.0.0.1", port)) if d.get("block_s") else None
    say("port", port)
    if blocker is not None:
        time.sleep(d["block_s"])
        sock.accept()[0].close()
    while True:
        conn, _ = sock.accept()
        say("accepted", time.perf_counter_ns())
        # as servers do: else Nagle holds a write until the client's (delayed) ACK of the last
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve_one, args=(conn, d, tls), daemon=True).start()


if __name__ == "__main__":
    main()
