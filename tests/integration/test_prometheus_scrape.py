"""A real Prometheus (Debian's ``prometheus`` package) scrapes a run's own metrics.

Prometheus starts on 127.0.0.1 with a scrape interval of 1 s against the
exporter of a run of the mock with two worker processes (records reach the
exporter at the parent), authenticated with a bearer token. The run holds a few
seconds and lingers past its last step; then Prometheus's HTTP API is asked
what it stored: the request count must equal records.jsonl's line count, per
phase, and the final scrape must have seen the run finished.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None,
    reason="no prometheus binary: apt-get install prometheus (.ci/run installs it)",
)
TOKEN = "promx-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A Prometheus scraping 127.0.0.1:<exporter port> every second; (its URL, that port)."""
    assert PROMETHEUS is not None
    target, web = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 900ms}\n"
        "scrape_configs:\n"
        "  - job_name: loadgen\n"
        f"    authorization: {{type: Bearer, credentials: {TOKEN}}}\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{target}']}}]\n"
    )
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{web}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{web}"
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "prometheus did not get ready in 20 s"
            time.sleep(0.2)
        yield url, target
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def query(url: str, promql: str) -> list[dict[str, object]]:
    r = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=5)
    r.raise_for_status()
    body = r.json()
    assert body["status"] == "success", body
    result: list[dict[str, object]] = body["data"]["result"]
    return result


def scalar(url: str, promql: str) -> float:
    result = query(url, promql)
    assert len(result) == 1, (promql, result)
    value = result[0]["value"]
    assert isinstance(value, list)
    return float(value[1])


def test_prometheus_holds_as_many_requests_as_records_jsonl(
    prometheus: tuple[str, int],
    scenario: Callable[..., Scenario],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, port = prometheus
    monkeypatch.setenv("PROMX_METRICS_TOKEN", TOKEN)
    mock = {"args": ["--itl-ms", "10"]}  # ITL paced at 10 ms: two workers on a busy machine
    sc = scenario(
        target={"url": "mock", "api": "openai-chat", "model": "m", "mock": mock},
        # 64 tokens at 10 ms: about 5 requests in flight at 8/s, so every scrape during
        # the load sees some (16-token answers left ~1, and a CI run scraped 0 six times)
        workload={"output_tokens": {"dist": "fixed", "value": 64}},
        load={"mode": "rate", "rate": [8], "requests_per_step": 40, "warmup_requests": 3}
        | {"workers": 2},
        telemetry={
            "serve_metrics": f"127.0.0.1:{port}",
            "serve_metrics_token_env": "PROMX_METRICS_TOKEN",
            "serve_metrics_linger_s": 3.0,
        },
    )
    out = tmp_path / "run"
    run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    records = list(read_records(out / "records.jsonl"))
    lines = (out / "records.jsonl").read_bytes().count(b"\n")
    assert lines == len(records) > 20
    # the exporter is gone: a counter's last value is its largest over the run
    last = "max_over_time({}[5m])"
    assert scalar(url, last.format("loadgen_run_finished")) == 1.0  # the final state scraped
    total = scalar(url, f"sum({last.format('loadgen_requests_total')})")
    assert total == lines
    warmup = sum(r.warmup for r in records)
    assert warmup == 3
    by_phase = {
        str(s["metric"]["phase"]): float(s["value"][1])  # type: ignore[index]
        for s in query(url, f"sum by (phase) ({last.format('loadgen_requests_total')})")
    }
    assert by_phase == {"warmup": warmup, "measured": lines - warmup}
    ok = sum(r.ok and not r.warmup for r in records)
    assert scalar(url, f"sum({last.format('loadgen_e2e_seconds_count')})") == ok
    out_tokens = sum(r.output_tokens for r in records)
    assert scalar(url, f"sum({last.format('loadgen_output_tokens_total')})") == out_tokens
    assert scalar(url, last.format("loadgen_load_point") + " * 0 + 8") == 8
    assert scalar(url, "max_over_time(loadgen_load_point{mode='rate'}[5m])") == 8
    # it was scraped while the load ran, not only at the end
    assert scalar(url, "count_over_time(loadgen_run_info[5m])") >= 4
    assert scalar(url, "max_over_time(loadgen_in_flight_requests[5m])") >= 1
    assert scalar(url, "max_over_time(up{job='loadgen'}[5m])") == 1
