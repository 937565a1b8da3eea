"""What `loadgen run` says on the terminal, through the CLI, against real sockets.

Each user mistake (nothing listening, a URL ending in /v1, an unknown model,
an https server whose CA is not given) runs against a small server of our own
on 127.0.0.1 and must end in exit 3 with its hint on stderr; the README's demo,
shortened, must print its verdict and no warning. The last stdout lines of a
run are always the verdict and the results path.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from loadgen.cli import main
from loadgen.report.terminal.progress import Progress

ROOT = Path(__file__).resolve().parents[2]

Serve = Callable[..., str]


def scenario_file(tmp_path: Path, url: str, model: str = "served", extra: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"""
name: t
target:
  url: "{url}"
  model: {model}
  timeouts_s: {{connect: 3, first_token: 5}}{extra}
workload:
  prompt_tokens: {{dist: fixed, value: 8}}
  output_tokens: {{dist: fixed, value: 3}}
  calibrate: false
load: {{mode: concurrency, concurrency: [1, 2], requests_per_step: 3}}
sla: {{ttft_ms: {{mean: 2000}}}}
"""
    )
    return path


def run_cli(args: list[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_ends_with_verdict(out: str, out_dir: Path) -> None:
    """The last lines: the verdict (wrapped to 80 columns, continued indented), the path."""
    lines = out.strip().splitlines()
    assert lines[-1] == f"results: {out_dir}", out
    at = max(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert all(line.startswith("  ") for line in lines[at + 1 : -1]), out
    assert all(len(line) <= 80 for line in lines[at:-1]), out


class _OpenAIish(BaseHTTPRequestHandler):
    """GET /health, /v1/models; streaming POST /v1/chat/completions under a base path."""

    protocol_version = "HTTP/1.1"
    # headers, then each chunk, in writes of their own: with Nagle on, a kept-alive
    # connection held each write for loadgen's delayed ACK (TTFT 43 ms, not 3)
    disable_nagle_algorithm = True
    models: ClassVar[list[str]] = ["served"]
    prefix = ""
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path == f"{self.prefix}/health":
            self._send(200, b"")
        elif self.path == f"{self.prefix}/v1/models":
            self._send(200, json.dumps({"data": [{"id": m} for m in self.models]}).encode())
        else:
            self._send(404, b'{"detail": "Not Found"}')

    def do_POST(self) -> None:
        self.seen.append(self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != f"{self.prefix}/v1/chat/completions":
            self._send(404, b'{"detail": "Not Found"}')
            return
        if body.get("model") not in self.models:
            msg = {"error": {"message": f"The model `{body.get('model')}` does not exist."}}
            self._send(404, json.dumps(msg).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events: list[dict[str, object]] = [
            {"choices": [{"delta": {"content": f" t{i}"}, "finish_reason": None}]} for i in range(3)
        ]
        events.append({"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 3}})
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
def serve() -> Iterator[Serve]:
    """``serve(models=[...], prefix="", tls=None) -> base URL`` of a server for this test."""
    started: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def start(
        models: list[str] | None = None,
        prefix: str = "",
        tls: ssl.SSLContext | None = None,
        seen: list[str] | None = None,
    ) -> str:
        attrs = {
            "models": models or ["served"],
            "prefix": prefix,
            "seen": [] if seen is None else seen,
        }
        handler = type("Handler", (_OpenAIish,), attrs)
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        started.append((server, thread))
        scheme = "https" if tls is not None else "http"
        return f"{scheme}://127.0.0.1:{server.server_address[1]}"

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(5)


def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nothing_listening_exits_3_with_the_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["run", scenario_file(tmp_path, url), "--out", out_dir], capsys)
    assert code == 3
    assert "  errors: 3 connect_error: " in err
    assert f"    hint: is the server running at {url}?" in err.splitlines()
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(f"loadgen: target unusable: no request succeeded at {url} (3 connect_error)")
    )
    assert "warning:" not in out  # warnings and errors go to stderr
    assert_ends_with_verdict(out, out_dir)


def test_a_url_ending_in_v1_exits_3_and_says_drop_v1(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve() + "/v1"
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["run", scenario_file(tmp_path, url), "--out", out_dir], capsys)
    assert code == 3
    assert "  errors: 3 http_404" in err
    assert f"    hint: target.url ends in /v1 and loadgen adds /v1/...: drop /v1 ({url})" in err
    assert_ends_with_verdict(out, out_dir)


def test_an_unknown_model_exits_3_and_lists_the_served_models(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(models=["qwen-7b", "llama-8b"])
    path = scenario_file(tmp_path, url, model="gpt-4")
    code, _, err = run_cli(["run", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 3
    lines = err.splitlines()
    assert lines[0] == "warning: model 'gpt-4' is not among the served models (qwen-7b, llama-8b)"
    assert "  errors: 3 http_404: " in err and "does not exist" in err
    assert "    hint: model 'gpt-4' is not served; the server lists: qwen-7b, llama-8b" in lines


def test_an_untrusted_certificate_exits_3_and_points_to_ca_file(
    serve: Serve,
    tls_certificate: tuple[Path, ssl.SSLContext],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = serve(tls=tls_certificate[1])
    code, _, err = run_cli(
        ["run", str(scenario_file(tmp_path, url)), "--out", str(tmp_path / "out")], capsys
    )
    assert code == 3
    assert "CERTIFICATE_VERIFY_FAILED" in err
    assert (
        "    hint: the server's certificate is not trusted: give its CA as target.tls.ca_file"
        in err
    )
    # with the CA given, the same server works
    extra = f"\n  tls: {{ca_file: {tls_certificate[0]}}}"
    path = scenario_file(tmp_path, url, extra=extra)
    code, _, err = run_cli(["run", str(path), "--out", str(tmp_path / "ok")], capsys)
    assert code == 0, err
    assert "errors:" not in err and "hint:" not in err


def test_a_base_path_is_a_prefix_of_every_endpoint(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []
    url = serve(prefix="/gateway/llm", seen=seen) + "/gateway/llm/"
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["run", scenario_file(tmp_path, url), "--out", out_dir], capsys)
    assert code == 0, err
    assert "errors:" not in err and "/health" not in err and "served models" not in err
    assert {"/gateway/llm/health", "/gateway/llm/v1/models"} <= set(seen)
    assert seen.count("/gateway/llm/v1/chat/completions") == 6
    assert_ends_with_verdict(out, out_dir)


def test_model_auto_takes_the_only_served_model(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    path = scenario_file(tmp_path, serve(models=["only-one"]), model="auto")
    code, _, err = run_cli(["run", str(path), "--out", str(out_dir)], capsys)
    assert code == 0, err
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["model"] == "only-one"
    assert summary["steps"][0]["requests"]["ok"] == 3


def test_model_auto_with_several_models_names_them(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(models=["a", "b"])
    path = scenario_file(tmp_path, url, model="auto")
    code, _, err = run_cli(["run", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 1
    assert err.strip() == (
        f"loadgen: target.model auto: {url}/v1/models lists 2 models (a, b); "
        "name one in target.model"
    )


def test_http2_that_fell_back_to_http1_is_recorded_and_warned(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    path = scenario_file(tmp_path, serve(), extra="\n  http2: true")
    code, _, err = run_cli(["run", str(path), "--out", str(out_dir)], capsys)
    assert code == 0, err
    assert (
        "warning: target.http2 is set but the server answered in HTTP/1.1: "
        "the numbers are HTTP/1.1's"
    ) in err.splitlines()
    assert err.count("target.http2") == 1  # said once, not after every step
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["target_check"]["http_versions"] == ["HTTP/1.1"]


def test_quiet_still_ends_with_the_verdict_and_results_path(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    path = scenario_file(tmp_path, serve())
    code, out, err = run_cli(["run", str(path), "--out", str(out_dir), "-q"], capsys)
    assert code == 0, err
    assert out.startswith("verdict: max concurrency meeting the SLA: 2")
    assert_ends_with_verdict(out, out_dir)
    assert not any(line.startswith("step ") for line in out.splitlines())  # no step tables


def test_fail_on_sla_names_the_bound(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_file(tmp_path, serve())
    # E2E: its ends are stamped exactly (the send's and the last read's), whereas this
    # server writes its events back to back, so a TTFT may share its read (and its bound
    # may reach back to the send: docs/metrics.md, "Client error")
    bound = "ttft_ms: {mean: 2000}"
    path.write_text(path.read_text().replace(bound, "e2e_ms: {mean: 0.0001}"))
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["run", str(path), "--out", str(out_dir), "--fail-on-sla"], capsys)
    assert code == 1, out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("loadgen: SLA missed: step 0: e2e_ms.mean ")
    assert " > 0.0001 (interval from " in last
    assert_ends_with_verdict(out, out_dir)


@pytest.mark.timing  # no warning: the client must not be saturated by a busy machine
def test_the_readme_demo_prints_its_verdict_and_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "demo"
    args = ["run", str(ROOT / "scenarios" / "demo.yaml"), "--out", str(out_dir)]
    # 40 requests a step: enough to confirm the demo's p90 bounds (36 with none beyond)
    code, out, err = run_cli([*args, "--concurrency", "1,4", "--requests", "40"], capsys)
    assert code == 0, err
    assert "warning" not in out + err, out + err
    assert "unsure" not in out + err, out  # every bound decided
    assert "step 1 · concurrency 4" in out
    assert_ends_with_verdict(out, out_dir)
    assert "verdict: max concurrency meeting the SLA: 4" in out


def test_progress_counts_the_steps_and_knows_each_steps_length(
    serve: Serve,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[tuple[str, int | None, float | None]] = []

    def start_step(
        self: Progress, label: str, total: int | None, duration_s: float | None = None
    ) -> None:
        started.append((label, total, duration_s))

    monkeypatch.setattr(Progress, "start_step", start_step)
    path = scenario_file(tmp_path, serve())
    code, _, err = run_cli(["run", path, "--out", tmp_path / "a", "-q"], capsys)
    assert code == 0, err
    assert started == [("[1/2] concurrency 1", 3, None), ("[2/2] concurrency 2", 3, None)]
    started.clear()
    code, _, err = run_cli(
        ["run", path, "--out", tmp_path / "b", "-q", "--duration", "0.5"], capsys
    )
    assert code == 0, err
    assert started == [("[1/2] concurrency 1", None, 0.5), ("[2/2] concurrency 2", None, 0.5)]


def test_compare_into_a_folder_under_a_file_is_one_line_and_exit_2(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_file(tmp_path, serve())
    for name in ("a", "b"):
        code, _, err = run_cli(["run", path, "--out", tmp_path / name, "-q"], capsys)
        assert code == 0, err
    a_file = tmp_path / "taken"
    a_file.write_text("")
    args = ["compare", tmp_path / "a", tmp_path / "b", "--out", a_file / "sub"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err == f"loadgen: {a_file / 'sub'}: cannot write there: Not a directory\n"


def test_a_scenario_without_a_url_says_it_runs_the_mock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("load: {mode: concurrency, concurrency: [1], requests_per_step: 2}\n")
    code, _, err = run_cli(["run", path, "--out", tmp_path / "out", "-q"], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "warning: the scenario gives no target.url: the built-in mock is the target"
    )
