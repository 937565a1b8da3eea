"""The collector against a real agent process (fake NVML) and a tiny Prometheus server."""

from __future__ import annotations

import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest

from loadgen import clock
from loadgen.telemetry import TelemetryCollector

Spawn = Callable[..., tuple[subprocess.Popen[str], str]]
Stop = Callable[[subprocess.Popen[str]], int]


class _Metrics(BaseHTTPRequestHandler):
    scrapes = 0

    def do_GET(self) -> None:
        type(self).scrapes += 1
        n = type(self).scrapes
        body = (
            "# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{model_name="m"}} {n % 4}\n'
            f'vllm:num_requests_waiting{{model_name="m"}} 1\n'
            f'vllm:kv_cache_usage_perc{{model_name="m"}} 0.{n % 10}\n'
            f'vllm:num_preemptions_total{{model_name="m"}} {n // 3}\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def metrics_server() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()
    server.server_close()
    thread.join(5)


def _lines(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_collects_aligns_and_summarises(
    agent_proc: Spawn, metrics_server: tuple[ThreadingHTTPServer, str], tmp_path: Path
) -> None:
    _, url = agent_proc("--fake-nvml", "2", "--interval-ms", "50")
    out = tmp_path / "telemetry.jsonl"
    collector = TelemetryCollector([url], metrics_server[1], out, interval_s=0.2)
    t = time.perf_counter()
    collector.start()
    assert time.perf_counter() - t < 0.2  # returns at once
    start = clock.now_ns()
    time.sleep(1.2)
    end = clock.now_ns()
    stats = collector.step_stats(start, end, output_tokens=500)
    collector.stop()

    lines = _lines(out)
    assert lines[0]["type"] == "meta" and lines[0]["agents"] == [url]
    clock_line = next(x for x in lines if x["type"] == "clock")
    # the agent is on this host and uses CLOCK_MONOTONIC too: the offset is ~0
    assert abs(clock_line["offset_ns"]) <= clock_line["uncertainty_ns"] + clock.NS_PER_MS
    gpu = [x for x in lines if x["type"] == "gpu"]
    assert {x["gpu"] for x in gpu} == {0, 1}
    pairs = [(x["gpu"], x["agent_t_ns"]) for x in gpu]
    assert len(pairs) == len(set(pairs))  # `since` never fetches a sample twice
    for x in gpu:
        assert x["t_ns"] == x["agent_t_ns"] - clock_line["offset_ns"]
        assert {"source", "agent_wall_ns", "util_gpu_pct", "power_w", "energy_j"} <= set(x)
    server = [x for x in lines if x["type"] == "server"]
    assert len(server) >= 4 and all("running" in x and x["engine"] == "vllm" for x in server)
    assert not [x for x in lines if x["type"] == "gap"]

    assert [g.gpu for g in stats.gpus] == [0, 1]
    for g in stats.gpus:
        assert g.samples >= 15 and g.energy_j > 0 and g.energy_coverage > 0.9
        assert g.j_per_output_token == pytest.approx(g.energy_j / 500)
    assert stats.server.scrapes >= 4 and stats.server.running.max <= 3
    assert stats.gaps == []
    orjson.dumps(stats.model_dump())


def test_sources_dying_mid_run_become_gaps(
    agent_proc: Spawn,
    stop: Stop,
    metrics_server: tuple[ThreadingHTTPServer, str],
    tmp_path: Path,
) -> None:
    proc, url = agent_proc("--fake-nvml", "1", "--interval-ms", "50")
    out = tmp_path / "telemetry.jsonl"
    collector = TelemetryCollector([url], metrics_server[1], out, interval_s=0.15)
    collector.start()
    start = clock.now_ns()
    time.sleep(1.5)  # samples before the death, even when the agent starts slowly (CI)
    proc.kill()  # by PID, mid-run
    stop(proc)
    metrics_server[0].shutdown()
    metrics_server[0].server_close()
    time.sleep(1.2)  # at least two failed polls of each, on a busy machine too
    end = clock.now_ns()
    stats = collector.step_stats(start, end, output_tokens=100)
    collector.stop()

    kinds = {g.kind: g for g in stats.gaps}
    assert kinds["agent"].source == url and kinds["agent"].failures >= 2
    assert kinds["server_metrics"].failures >= 2
    assert stats.gpus[0].samples >= 5  # what came before the death is kept
    gaps = [x for x in _lines(out) if x["type"] == "gap"]
    assert {x["kind"] for x in gaps} == {"agent", "server_metrics"}
    assert all(x["error"] for x in gaps)


def test_token_is_sent_and_a_refusal_is_a_gap(agent_proc: Spawn, tmp_path: Path) -> None:
    _, url = agent_proc("--fake-nvml", "1", "--token-env", "AGENT_T", env={"AGENT_T": "k"})
    good = TelemetryCollector([url], None, tmp_path / "good.jsonl", token="k", interval_s=0.2)
    bad = TelemetryCollector([url], None, tmp_path / "bad.jsonl", interval_s=0.2)
    good.start()
    bad.start()
    time.sleep(0.5)
    good.stop()
    bad.stop()
    assert any(x["type"] == "gpu" for x in _lines(tmp_path / "good.jsonl"))
    bad_lines = _lines(tmp_path / "bad.jsonl")
    assert not any(x["type"] == "gpu" for x in bad_lines)
    assert any(x["type"] == "gap" and "401" in str(x["error"]) for x in bad_lines)


def test_nothing_reachable_never_raises(tmp_path: Path) -> None:
    collector = TelemetryCollector(
        ["http://127.0.0.1:1"], "http://127.0.0.1:1/metrics", tmp_path / "t.jsonl", interval_s=0.1
    )
    collector.start()
    time.sleep(0.3)
    stats = collector.step_stats(0, clock.now_ns(), 10)
    collector.stop()
    collector.stop()  # idempotent
    assert stats.gpus == [] and len(stats.gaps) == 2


@pytest.mark.parametrize("trusted", [True, False])
def test_an_https_server_metrics_endpoint_uses_the_targets_tls(
    tls_certificate: tuple[Path, ssl.SSLContext], tmp_path: Path, trusted: bool
) -> None:
    cert, server_tls = tls_certificate
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    server.socket = server_tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"https://127.0.0.1:{server.server_address[1]}/metrics"
    context = ssl.create_default_context(cafile=str(cert)) if trusted else None
    out = tmp_path / "telemetry.jsonl"
    collector = TelemetryCollector([], url, out, interval_s=0.1, server_tls=context)
    collector.start()
    time.sleep(0.5)
    collector.stop()
    server.shutdown()
    server.server_close()
    thread.join(5)
    kinds = [x["type"] for x in _lines(out)]
    if trusted:
        assert "server" in kinds and "gap" not in kinds
    else:  # the system's CAs do not know this certificate: every scrape is a gap
        gaps = [x for x in _lines(out) if x["type"] == "gap"]
        assert "server" not in kinds and gaps
        assert all("CERTIFICATE_VERIFY_FAILED" in str(x["error"]) for x in gaps)


def test_a_password_in_a_source_url_is_sent_but_never_written(
    agent_proc: Spawn, metrics_server: tuple[ThreadingHTTPServer, str], tmp_path: Path
) -> None:
    """The probe (issue #20): ``server_metrics: http://user:pw@host/metrics`` put the password
    in summary.json at ``steps[].telemetry.server.source``. The step's stats and every line
    name both sources without userinfo; the scrapes and polls still get through."""
    _, agent = agent_proc("--fake-nvml", "1", "--interval-ms", "50")
    plain = metrics_server[1]
    secret_metrics = plain.replace("http://", "http://bob:PWmetrics-9@")
    secret_agent = agent.replace("http://", "http://carol:PWagent-9@")
    out = tmp_path / "telemetry.jsonl"
    collector = TelemetryCollector([secret_agent], secret_metrics, out, interval_s=0.2)
    collector.start()
    start = clock.now_ns()
    time.sleep(1.0)
    stats = collector.step_stats(start, clock.now_ns(), output_tokens=10)
    collector.stop()
    assert stats.server is not None and stats.server.source == plain
    assert stats.gpus and {g.agent for g in stats.gpus} == {agent}
    dumped = orjson.dumps(stats.model_dump()) + out.read_bytes()
    assert b"PWmetrics-9" not in dumped and b"PWagent-9" not in dumped
    assert _lines(out)[0]["server_metrics"] == plain
