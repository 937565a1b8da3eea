"""workload.cancel for real: loadgen against the built-in mock on 127.0.0.1 aborts the
streams its seed picks, at the point drawn, on every transport; the mock sees each client
go; the records, summary.json and steps.csv count them apart from the latencies."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.scenario.cancel_spec import CancelSpec
from loadgen.summary import Summary
from loadgen.workload.cancel import CancelPicker

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

# ITL >= 8 ms under concurrency (timing under a loaded host)
FIXED = ["--ttft-ms", "5", "--itl-ms", "8"]
N = 60
TOKENS = {"share": 0.3, "after_tokens": {"dist": "uniform", "min": 2, "max": 10}}


def run(
    out: Path,
    cancel: dict[str, Any],
    *,
    transport: str = "auto",
    workers: int = 1,
    reports: bool = False,
    **workload: Any,
) -> tuple[Summary, list[Record], list[dict[str, Any]]]:
    truth = out.parent / f"{out.name}-truth.jsonl"
    sc = {
        "name": "cancel",
        "target": {
            "url": "mock",
            "api": "openai-chat",
            "transport": transport,
            "extra_body": {"ignore_eos": True},
            "mock": {"args": [*FIXED, "--truth", str(truth)]},
        },
        "workload": {
            "seed": 11,
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": 24},
            "cancel": cancel,
            **workload,
        },
        "load": {
            "mode": "concurrency",
            "concurrency": [4],
            "requests_per_step": N,
            "workers": workers,
        },
    }
    options = RunOptions(out, quiet=True, reports=reports)
    summary = run_scenario(Scenario.model_validate(sc), options)
    lines = [orjson.loads(x) for x in truth.read_bytes().splitlines() if x]
    return summary, list(read_records(out / "records.jsonl")), lines


@pytest.mark.parametrize("transport", ["h1", "aiohttp", "httpx"])
def test_the_seeds_picks_are_aborted_after_their_tokens(transport: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary, records, truth = run(out, TOKENS, transport=transport, reports=True)
    pick = CancelPicker(CancelSpec.model_validate(TOKENS), 11, 0)
    # exactly the requests the seed picked (every answer is longer than any point)
    cut = [r for r in records if r.cancelled_by_client]
    assert sorted(r.id for r in cut) == [i for i in range(N) if pick(i) is not None]
    assert 0.1 < len(cut) / N < 0.5
    for r in cut:
        stop = pick(r.id)
        assert stop is not None
        assert r.output_events == len(r.token_ns) == stop[0]  # the tokens received
        assert not r.ok and r.error_kind is None and r.reconnects == 0
        assert r.end_ns >= r.token_ns[-1] == r.last_token_ns
    rest = [r for r in records if not r.cancelled_by_client]
    assert all(r.ok and r.output_events == 24 for r in rest)  # nothing else went wrong
    # the mock saw each cut client go, and only those
    aborted = {x["request_id"] for x in truth if x.get("aborted")}
    assert aborted == {r.request_id for r in cut}
    assert {x["request_id"] for x in truth} == {r.request_id for r in records}
    # counted apart in the summary, its file and steps.csv
    (step,) = summary.steps
    req = step.requests
    assert (req.total, req.ok, req.failed, req.cancelled_by_client) == (
        N,
        N - len(cut),
        0,
        len(cut),
    )
    assert req.cancelled_by_client_share == len(cut) / N and req.error_rate == 0
    assert step.tokens.cancelled_output_total == sum(r.output_events for r in cut)
    assert step.tokens.output_total == 24 * (N - len(cut))
    assert step.ttft_ms.count == step.e2e_ms.count == N - len(cut)
    saved = orjson.loads((out / "summary.json").read_bytes())["steps"][0]
    assert saved["requests"]["cancelled_by_client"] == len(cut)
    (row,) = csv.DictReader((out / "steps.csv").open())
    assert int(row["requests_cancelled_by_client"]) == len(cut)
    assert int(row["cancelled_output_tokens"]) == step.tokens.cancelled_output_total


def test_after_s_aborts_that_long_after_the_send(tmp_path: Path) -> None:
    cancel = {"share": 0.5, "after_s": {"dist": "fixed", "value": 0.06}}
    summary, records, truth = run(
        tmp_path / "out", cancel, output_tokens={"dist": "fixed", "value": 40}
    )
    cut = [r for r in records if r.cancelled_by_client]
    pick = CancelPicker(CancelSpec.model_validate(cancel), 11, 0)
    assert sorted(r.id for r in cut) == [i for i in range(N) if pick(i) is not None]
    for r in cut:  # never early; late by at most the timer's slack and a loaded host's
        assert 60e6 <= r.end_ns - r.start_ns < 60e6 + 40e6
        assert 0 < r.output_events < 40 and r.error_kind is None
    assert {x["request_id"] for x in truth if x.get("aborted")} == {r.request_id for r in cut}
    assert summary.steps[0].requests.cancelled_by_client == len(cut)
    assert summary.steps[0].requests.failed == 0


def test_an_aborted_turn_ends_its_session(tmp_path: Path) -> None:
    cancel = {"share": 0.3, "after_tokens": {"dist": "fixed", "value": 3}}
    sessions = {"turns": {"dist": "fixed", "value": 3}}
    summary, records, _ = run(tmp_path / "out", cancel, sessions=sessions)
    pick = CancelPicker(CancelSpec.model_validate(cancel), 11, 0)
    by_session: dict[int, list[Record]] = {}
    for r in records:
        assert r.session is not None
        by_session.setdefault(r.session, []).append(r)
    assert any(r.cancelled_by_client for r in records)
    for s, turns in by_session.items():
        planned = pick.turns(s, 3)
        first_cut = next((t for t, c in enumerate(planned) if c is not None), None)
        sent = sorted(r.turn for r in turns if r.turn is not None)
        if first_cut is None:
            assert sent == [0, 1, 2]
        else:  # the turns up to the cut one, then the user is gone
            assert sent == list(range(first_cut + 1))
            last = next(r for r in turns if r.turn == first_cut)
            assert last.cancelled_by_client and last.output_events == 3
    assert summary.steps[0].requests.failed == 0


def test_two_workers_abort_the_requests_one_process_would(tmp_path: Path) -> None:
    summary, records, truth = run(tmp_path / "out", TOKENS, workers=2)
    assert summary.workers == 2 and len(records) == N
    pick = CancelPicker(CancelSpec.model_validate(TOKENS), 11, 0)
    cut = [r for r in records if r.cancelled_by_client]
    assert sorted(r.id for r in cut) == sorted(r.id for r in records if pick(r.id) is not None)
    assert all(r.output_events == (pick(r.id) or (0,))[0] for r in cut)
    assert {x["request_id"] for x in truth if x.get("aborted")} == {r.request_id for r in cut}
    assert summary.steps[0].requests.cancelled_by_client == len(cut) > 0
