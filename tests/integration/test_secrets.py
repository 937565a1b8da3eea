"""No secret reaches a results file or the console, while requests still carry them.

Recognisable secrets go in every place a user can put one: URL userinfo of the
target, of telemetry.server_metrics and of an agent, headers (vendor key
headers included), extra_body and the variable that api_key_env names. A real
run against the mock (by its address: userinfo needs a URL) writes its
results; every file and both console streams are searched for each secret.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).parents[1] / "mock"))  # the mock process helper

from mockhttp import MockProc

SECRETS = {
    "url": "PWurl7361",
    "metrics": "PWmetrics7361",
    "agent": "PWagent7361",
    "goog": "PWgoog7361",
    "apim": "PWapim7361",
    "apikey": "PWapikey7361",
    "auth": "PWauth7361",
    "body": "PWbody7361",
    "nested": "PWnested7361",
    "env": "PWenv7361",
}


def scenario_text(port: int, *, agent: bool = True, live: bool = True) -> str:
    """``live``: streaming, with server_metrics (false: one JSON answer, no scrapes)."""
    s = SECRETS
    base = f"127.0.0.1:{port}"
    agents = f'["http://carol:{s["agent"]}@{base}"]' if agent else "[]"
    metrics = f'"http://bob:{s["metrics"]}@{base}/metrics"' if live else "null"
    return f"""
name: secrets
target:
  url: "http://alice:{s["url"]}@{base}"
  api: openai-chat
  stream: {str(live).lower()}
  model: m
  api_key_env: LOADGEN_TEST_SECRET_KEY
  headers:
    x-goog-api-key: {s["goog"]}
    Ocp-Apim-Subscription-Key: {s["apim"]}
    apikey: {s["apikey"]}
    X-Custom-Auth: {s["auth"]}
    User-Agent: loadgen-secret-test
  extra_body: {{api_key: {s["body"]}, metadata: {{access_token: {s["nested"]}}}}}
  timeouts_s: {{total: 30}}
workload:
  prompt_tokens: {{dist: fixed, value: 8}}
  output_tokens: {{dist: fixed, value: 4}}
load: {{mode: concurrency, concurrency: [2], requests_per_step: 6}}
telemetry:
  server_metrics: {metrics}
  agents: {agents}
  interval_s: 0.2
"""


def test_no_secret_in_any_output_or_on_the_console(tmp_path: Path) -> None:
    mock = MockProc(["--ttft-ms", "1", "--itl-ms", "1"], tmp_path / "mock.err")
    try:
        path = tmp_path / "s.yaml"
        path.write_text(scenario_text(mock.port))
        out = tmp_path / "out"
        env = {**os.environ, "LOADGEN_TEST_SECRET_KEY": SECRETS["env"]}
        cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out)]
        done = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
    finally:
        mock.stop()
    console = done.stdout + done.stderr
    assert done.returncode == 0, console.decode(errors="replace")
    files = [p for p in out.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"summary.json", "scenario.yaml", "records.jsonl", "report.md", "report.html"} <= names
    assert "telemetry.jsonl" in names
    leaks = [
        f"{where}: {name}"
        for name, secret in SECRETS.items()
        for where, data in [("console", console)] + [(p.name, p.read_bytes()) for p in files]
        if secret.encode() in data
    ]
    assert not leaks
    assert b"loadgen-secret-test" in (out / "scenario.yaml").read_bytes()  # harmless: kept
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert rows and all(row["ok"] for row in rows)  # the userinfo URL still reaches the mock


def test_no_secret_when_nothing_answers(tmp_path: Path) -> None:
    """Errors, hints and the unusable-target verdict name the URL without its password."""
    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = tmp_path / "s.yaml"
    path.write_text(scenario_text(port, agent=False))
    out = tmp_path / "out"
    env = {**os.environ, "LOADGEN_TEST_SECRET_KEY": SECRETS["env"]}
    cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
    console = done.stdout + done.stderr
    assert done.returncode == 3, console.decode(errors="replace")
    assert b"Traceback" not in console and b"127.0.0.1" in console
    outputs = [("console", console)] + [
        (p.name, p.read_bytes()) for p in out.rglob("*") if p.is_file()
    ]
    leaks = [f"{w}: {n}" for n, s in SECRETS.items() for w, data in outputs if s.encode() in data]
    assert not leaks


class _Capture(http.server.BaseHTTPRequestHandler):
    """A tiny non-streaming chat server that keeps what each request carried."""

    seen: ClassVar[list[tuple[dict[str, str], bytes]]] = []

    def _answer(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer({"data": [{"id": "m"}]} if self.path.endswith("/models") else {})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.seen.append((dict(self.headers), body))
        usage = {"prompt_tokens": 8, "completion_tokens": 1, "total_tokens": 9}
        message = {"role": "assistant", "content": "hi"}
        self._answer({"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage})

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_requests_still_carry_every_secret(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        path = tmp_path / "s.yaml"
        path.write_text(scenario_text(server.server_address[1], agent=False, live=False))
        env = {**os.environ, "LOADGEN_TEST_SECRET_KEY": SECRETS["env"]}
        cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(tmp_path / "o")]
        done = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")
    assert _Capture.seen
    headers, body = _Capture.seen[-1]
    lower = {k.lower(): v for k, v in headers.items()}
    assert lower["x-goog-api-key"] == SECRETS["goog"]
    assert lower["ocp-apim-subscription-key"] == SECRETS["apim"]
    assert lower["apikey"] == SECRETS["apikey"]
    assert lower["authorization"] == f"Bearer {SECRETS['env']}"
    sent = json.loads(body)
    assert sent["api_key"] == SECRETS["body"]
    assert sent["metadata"]["access_token"] == SECRETS["nested"]
