"""What a server echoes of the scenario's secrets is redacted before it is stored or printed.

Probes (issue #20), each against a raw-socket server on 127.0.0.1 in this test:

- the server echoes the credentials it was sent: a 401 whose body quotes the
  ``Authorization`` and ``X-Api-Key`` headers, and a 200 stream that carries an
  in-stream error event quoting the key. The old code kept the text whole in
  records.jsonl ``error_detail`` and printed it in the step's error lines;
- the target URL's password holds an unencoded ``@``
  (``http://alice:p@ss-...@host``): the old redaction stopped at the first
  ``@`` and printed the rest of the password in ``target_check.warnings`` (the
  server's /health answers 503) and in the "is the server running at" hint
  (nothing listens on the port).

Every results file and both console streams are searched for each secret;
the server's message itself is kept (with ``<redacted>`` in place of the key).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from loadgen.redact import REDACTED
from tests.integration.rawserver import LoopServer

KEY = "sk-ECHO-KEY-5150"
HEADER = "hdr-ECHO-HEADER-5150"
PASSWORD = "p@ss-ECHO-URL-5150"
SECRETS = (KEY, HEADER, PASSWORD, "ECHO-URL", "ECHO-KEY", "ECHO-HEADER")


class EchoServer(LoopServer):
    """/health 503, /v1/models lists m; a completion: 401 quoting the request's credential
    headers (even requests), or a stream whose error event quotes the key (odd ones)."""

    def __init__(self) -> None:
        super().__init__()
        self.completions = 0

    def __enter__(self) -> int:
        self.start()
        return self.port

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(20):
                while True:  # kept alive: one request after another
                    head = (await reader.readuntil(b"\r\n\r\n")).decode()
                    headers = {}
                    for line in head.split("\r\n")[1:]:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    await reader.readexactly(int(headers.get("content-length", "0")))
                    writer.write(self._answer(head.split(" ", 2)[1], headers))
                    await writer.drain()
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()

    def _answer(self, path: str, headers: dict[str, str]) -> bytes:
        if path == "/v1/models":
            return _http("200 OK", "application/json", b'{"data":[{"id":"m"}]}')
        if not path.startswith("/v1/chat/completions"):
            return _http("503 Service Unavailable", "text/plain", b"starting")
        n, self.completions = self.completions, self.completions + 1
        if n % 2 == 0:
            auth, key = headers.get("authorization"), headers.get("x-api-key")
            quoted = f"Authorization={auth}; x-api-key={key}"
            body = json.dumps({"error": {"message": f"invalid credentials: {quoted}"}})
            return _http("401 Unauthorized", "application/json", body.encode())
        token = b'data: {"choices":[{"delta":{"content":"a"},"finish_reason":null}]}\n\n'
        error = json.dumps({"error": {"message": f"key {KEY} revoked mid-stream"}})
        stream = token + f"data: {error}\n\n".encode() + b"data: [DONE]\n\n"
        return _http("200 OK", "text/event-stream", stream)


def _http(status: str, kind: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def scenario(port: int, requests: int) -> str:
    return f"""
name: echo
target:
  url: "http://alice:{PASSWORD}@127.0.0.1:{port}"
  model: m
  api_key_env: LOADGEN_TEST_ECHO_KEY
  headers: {{X-Api-Key: {HEADER}}}
  timeouts_s: {{connect: 2, total: 10}}
workload:
  calibrate: false
  prompt_tokens: {{dist: fixed, value: 8}}
  output_tokens: {{dist: fixed, value: 4}}
load: {{mode: concurrency, concurrency: [1], requests_per_step: {requests}, stop_early: null}}
"""


def run(tmp_path: Path, port: int, requests: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    path = tmp_path / "s.yaml"
    path.write_text(scenario(port, requests))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LOADGEN_TEST_ECHO_KEY": KEY},
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc, out


def assert_no_secret(proc: subprocess.CompletedProcess[str], out: Path) -> None:
    places = {"stdout": proc.stdout, "stderr": proc.stderr}
    for file in out.rglob("*"):
        if file.is_file() and file.suffix not in (".png",):
            places[str(file.relative_to(out))] = file.read_text(errors="replace")
    for where, text in places.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} in {where}: {text[-2000:]}"


def test_what_the_server_echoes_of_the_credentials_is_redacted(tmp_path: Path) -> None:
    with EchoServer() as port:
        proc, out = run(tmp_path, port, requests=6)
    assert_no_secret(proc, out)
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    details = [r["error_detail"] or "" for r in rows if not r["warmup"]]
    assert len(details) == 6 and all(REDACTED in d for d in details), details
    assert any("invalid credentials" in d for d in details), details  # the message is kept
    assert any("revoked mid-stream" in d for d in details), details
    assert "invalid credentials" in proc.stderr  # the step's error lines
    warnings = json.loads((out / "summary.json").read_text())["target_check"]["warnings"]
    assert any("/health" in w and "127.0.0.1" in w for w in warnings), warnings


def test_a_password_with_an_at_sign_is_not_shown_in_the_hint(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, not listening: every connect is refused
        proc, out = run(tmp_path, sock.getsockname()[1], requests=3)
    assert "is the server running at http://127.0.0.1:" in proc.stderr, proc.stderr
    assert_no_secret(proc, out)
