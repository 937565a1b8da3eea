"""Several endpoints in one run, for real: mock replicas and a list of URLs on 127.0.0.1.

Every request's record names its endpoint, and each mock's own truth file
(what that server really received) agrees with the records, request by request.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from loadgen.records import Record, read_records
from loadgen.results.rebuild import rebuild_summary
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from loadgen.target.cache import prefix_cache_all, prefix_cache_counters
from loadgen.target.endpoints import preflight_all
from loadgen.target.mock import MockServer
from loadgen.target.scrape import fetch_metrics_all

FAST = ["--ttft-ms", "5", "--itl-ms", "1"]
WORKLOAD = {
    "prompt_tokens": {"dist": "fixed", "value": 12},
    "output_tokens": {"dist": "fixed", "value": 4},
}


def run(
    sc: dict[str, Any], out: Path, *, quiet: bool = True, reports: bool = False
) -> tuple[Summary, list[Record]]:
    base: dict[str, Any] = {"name": "endpoints", "workload": WORKLOAD}
    options = RunOptions(out, quiet=quiet, reports=reports)
    summary = run_scenario(Scenario.model_validate({**base, **sc}), options)
    return summary, list(read_records(out / "records.jsonl"))


def truth_ids(path: Path) -> set[str]:
    """The request ids a mock's truth file says it served (chat requests only)."""
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return {r["request_id"] for r in rows if "completions" in r["path"]}


def test_two_mock_replicas_split_round_robin_and_show_per_endpoint_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = tmp_path / "truth.jsonl"
    sc = {
        "target": {
            "url": "mock",
            "model": "m",
            "mock": {"replicas": 2, "args": [*FAST, "--truth", str(truth)]},
        },
        "load": {
            "mode": "concurrency",
            "concurrency": [1, 3],
            "requests_per_step": 11,
            "warmup_requests": 2,
        },
    }
    out = tmp_path / "out"
    summary, records = run(sc, out, quiet=False, reports=True)
    console = capsys.readouterr().out

    assert summary.routing == "round_robin"
    assert summary.endpoints is not None and len(summary.endpoints) == 2
    assert all(u.startswith("http://127.0.0.1:") for u in summary.endpoints)
    assert summary.endpoints[0] != summary.endpoints[1]  # two servers, two ports
    assert all(r.ok for r in records), [r.error_detail for r in records if not r.ok]
    for step in summary.steps:
        assert step.endpoints is not None
        counts = [e.requests.total for e in step.endpoints]
        assert sum(counts) == step.requests.total == 11
        assert max(counts) - min(counts) <= 1  # round robin: within one request
        assert sum(e.requests.ok for e in step.endpoints) == step.requests.ok
        assert [e.url for e in step.endpoints] == summary.endpoints
        assert all(e.ttft_ms.count == e.requests.ok for e in step.endpoints)
        sent = Counter(r.endpoint for r in records if r.step == step.index)
        assert abs(sent[0] - sent[1]) <= 1  # warm-up included

    # each replica's own record of what it served agrees with ours, request by request
    for i in (0, 1):
        ours = {r.request_id for r in records if r.endpoint == i}
        assert truth_ids(tmp_path / f"truth.{i}.jsonl") == ours
        assert (out / f"mock.{i}.log").is_file()
    assert not truth.exists() and not (out / "mock.log").exists()

    # the console: a line per endpoint under each step's table
    for i, url in enumerate(summary.endpoints):
        rows = [line for line in console.splitlines() if line.split()[:1] == [f"#{i}"]]
        assert len(rows) == 2 and all(row.endswith(url) for row in rows)
    assert "at 2 endpoints (routing round_robin)" in console

    # summary.json, steps.csv, report.md carry the breakdown
    written = orjson.loads((out / "summary.json").read_bytes())
    assert [len(s["endpoints"]) for s in written["steps"]] == [2, 2]
    assert "endpoint1_requests_ok" in (out / "steps.csv").read_text().splitlines()[0]
    assert "| endpoint | URL |" in (out / "report.md").read_text()

    # a rebuilt summary (the run killed before summary.json) has the breakdown too
    (out / "summary.json").unlink()
    rebuilt = rebuild_summary(out)
    assert rebuilt.endpoints == ["mock replica 0", "mock replica 1"]
    for a, b in zip(rebuilt.steps, summary.steps, strict=True):
        assert a.endpoints is not None and b.endpoints is not None
        assert [e.requests.total for e in a.endpoints] == [e.requests.total for e in b.endpoints]


def test_a_list_of_urls_with_session_affinity(tmp_path: Path) -> None:
    """target.urls over two servers; every turn of a session reaches one server."""
    with contextlib.ExitStack() as stack:
        urls = []
        for i in range(2):
            args = [*FAST, "--truth", str(tmp_path / f"t{i}.jsonl")]
            urls.append(stack.enter_context(MockServer(args, tmp_path / f"m{i}.log", cpus=None)))
        sc = {
            "target": {"urls": urls, "model": "auto", "routing": "session"},
            "workload": {**WORKLOAD, "sessions": {"turns": {"dist": "fixed", "value": 3}}},
            "load": {"mode": "concurrency", "concurrency": [2], "requests_per_step": 6},
        }
        summary, records = run(sc, tmp_path / "out")
    assert summary.endpoints == urls and summary.routing == "session"
    assert summary.target_url == urls[0] and summary.model != "auto"
    assert summary.target_check is not None and summary.target_check.healthy
    assert all(r.ok for r in records), [r.error_detail for r in records if not r.ok]
    where: dict[int | None, set[int | None]] = {}
    for r in records:
        where.setdefault(r.session, set()).add(r.endpoint)
    assert len(where) == 6 and all(len(e) == 1 for e in where.values())
    assert Counter(next(iter(e)) for e in where.values()) == {0: 3, 1: 3}  # sessions in turn
    for i in (0, 1):
        ours = {r.request_id for r in records if r.endpoint == i}
        assert truth_ids(tmp_path / f"t{i}.jsonl") == ours
    step = summary.steps[0]
    assert step.endpoints is not None
    assert [e.requests.total for e in step.endpoints] == [9, 9]


@pytest.mark.parametrize("routing", ["least_in_flight", "round_robin"])
def test_least_in_flight_favours_the_faster_server(tmp_path: Path, routing: str) -> None:
    """A fast and a slow server: least_in_flight sends most requests to the fast one
    (the slow one holds its requests longer), round robin splits them evenly anyway."""
    with contextlib.ExitStack() as stack:
        urls = [
            stack.enter_context(
                MockServer(["--ttft-ms", ttft, "--itl-ms", "1"], tmp_path / f"{ttft}.log")
            )
            for ttft in ("2", "60")
        ]
        sc = {
            "target": {"urls": urls, "model": "m", "routing": routing},
            "load": {"mode": "concurrency", "concurrency": [4], "requests_per_step": 40},
        }
        summary, records = run(sc, tmp_path / "out")
    assert all(r.ok for r in records)
    sent = Counter(r.endpoint for r in records)
    step = summary.steps[0]
    assert step.endpoints is not None
    fast, slow = step.endpoints
    assert fast.e2e_ms.p50 is not None and slow.e2e_ms.p50 is not None
    assert fast.e2e_ms.p50 < slow.e2e_ms.p50
    if routing == "round_robin":
        assert abs(sent[0] - sent[1]) <= 1
    else:
        assert sent[0] > 2 * sent[1] > 0, sent
        assert fast.throughput.requests_per_s > 2 * slow.throughput.requests_per_s


def test_preflight_checks_every_endpoint_and_sums_the_cache_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.ExitStack() as stack:  # engine mode: it keeps prefix-cache counters
        urls = [
            stack.enter_context(MockServer(["--model", name], tmp_path / f"{name}.log"))
            for name in ("m", "other")
        ]
        sc = Scenario.model_validate(
            {
                "name": "pf",
                "target": {"urls": urls, "model": "m"},
                "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 1},
            }
        )
        check = preflight_all(sc, urls)
        assert check.healthy and check.models == ["m"]
        second = urls[1].rstrip("/")
        assert check.warnings == [
            f"{second}: model 'm' is not among the served models (other)",
            f"{second}: it lists other models than {urls[0]} (other)",
        ]
        assert capsys.readouterr().err.splitlines() == [f"warning: {w}" for w in check.warnings]
        # one prompt to the first server, two to the second: their counters differ
        for n, (url, model) in enumerate(zip(urls, ("m", "other"), strict=True)):
            for _ in range(n + 1):
                body = {"model": model, "prompt": "a b c d e f g h", "max_tokens": 2}
                assert httpx.post(f"{url}/v1/completions", json=body).status_code == 200
        texts = fetch_metrics_all(sc, urls)
        each = [prefix_cache_counters(t) if t is not None else None for t in texts]
        both = prefix_cache_all(texts)
        gone = prefix_cache_all(fetch_metrics_all(sc, [urls[0], "http://127.0.0.1:9"]))
    assert each[0] is not None and each[1] is not None and both is not None
    assert 0 < each[0]["queries"] < each[1]["queries"]
    assert both["queries"] == each[0]["queries"] + each[1]["queries"]
    assert both["hits"] == each[0]["hits"] + each[1]["hits"]
    # a server gone: no partial sum (it would be a wrong hit rate)
    assert gone is None


def test_worker_processes_route_too(tmp_path: Path) -> None:
    """load.workers: each worker routes its own requests; round robin stays within one."""
    truth = tmp_path / "truth.jsonl"
    sc = {
        "target": {
            "url": "mock",
            "model": "m",
            "mock": {"replicas": 2, "args": [*FAST, "--truth", str(truth)]},
        },
        "load": {
            "mode": "concurrency",
            "concurrency": [2],
            "requests_per_step": 10,  # 5 each: the odd fifth must not go to one endpoint
            "workers": 2,
        },
    }
    summary, records = run(sc, tmp_path / "out")
    assert summary.workers == 2
    assert all(r.ok and r.endpoint in (0, 1) for r in records)
    sent = Counter(r.endpoint for r in records)
    assert sent[0] + sent[1] == 10 and abs(sent[0] - sent[1]) <= 1
    step = summary.steps[0]
    assert step.endpoints is not None
    assert [e.requests.total for e in step.endpoints] == [sent[0], sent[1]]
    for i in (0, 1):
        ours = {r.request_id for r in records if r.endpoint == i}
        assert truth_ids(tmp_path / f"truth.{i}.jsonl") == ours
