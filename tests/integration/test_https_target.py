"""A whole run against an https:// server: target.tls reaches the pre-flight check and h1.

The server is a small threaded HTTPS server on 127.0.0.1 with a self-signed
certificate made at test time (``tls_certificate``), answering /health,
/v1/models and streaming /v1/completions the way vLLM does.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loadgen.scenario import Scenario

from .conftest import Runner, make_scenario

TOKENS = 5


class _Vllmish(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each token its own write, never held for an ACK

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(200, b"")
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"data": [{"id": "m"}]}).encode())
        else:
            self._send(404, b"{}")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [{"choices": [{"text": f" t{i}", "finish_reason": None}]} for i in range(TOKENS)]
        events[-1]["choices"][0]["finish_reason"] = "length"
        events.append({"choices": [], "usage": {"prompt_tokens": 16, "completion_tokens": TOKENS}})
        for data in [*(json.dumps(e) for e in events), "[DONE]"]:
            payload = f"data: {data}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https_server(tls_certificate: tuple[Path, ssl.SSLContext]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Vllmish)
    server.socket = tls_certificate[1].wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def _scenario(url: str, tls: dict[str, object]) -> Scenario:
    return make_scenario(
        target={"url": url, "api": "openai-completions", "model": "m", "tls": tls},
        load={"mode": "concurrency", "concurrency": [2], "requests_per_step": 6},
    )


def test_a_run_over_https_with_the_servers_ca(
    run: Runner, https_server: str, tls_certificate: tuple[Path, ssl.SSLContext]
) -> None:
    summary, records, _ = run(_scenario(https_server, {"ca_file": str(tls_certificate[0])}))
    assert summary.target_check is not None
    assert summary.target_check.healthy is True and summary.target_check.models == ["m"]
    assert [r.ok for r in records] == [True] * 6, [r.error_detail for r in records]
    assert all(len(r.token_ns) == TOKENS and r.output_tokens_server == TOKENS for r in records)
    assert summary.steps[0].ttft_ms.count == 6


def test_an_unknown_certificate_fails_every_request_as_a_row(
    run: Runner, https_server: str
) -> None:
    summary, records, _ = run(_scenario(https_server, {}))
    assert summary.target_check is not None and summary.target_check.healthy is False
    assert len(records) == 6 and not any(r.ok for r in records)
    assert {r.error_kind for r in records} == {"connect_error"}
    assert all("certificate" in (r.error_detail or "").lower() for r in records)
