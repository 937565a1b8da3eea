"""The one assembly of a step's summary: the tally's fan-out, and what the live run saw
beside the records (StepExtras) written by step_summary itself, not patched in after."""

from __future__ import annotations

import ast
from pathlib import Path

from loadgen.records import Record
from loadgen.results.assemble import ServerCounters, StepExtras, step_summary
from loadgen.results.sweep import Point
from loadgen.results.tally import StepTally
from loadgen.scenario import Scenario
from loadgen.summary import (
    PhaseTime,
    PrefixCacheStats,
    SpecDecodeStats,
    StepTelemetry,
    TelemetryWindow,
    TimeSplit,
)

MS = 1_000_000
PKG = Path(__file__).resolve().parents[3] / "loadgen"


def rec(i: int, *, endpoint: int | None = None, model: str | None = None) -> Record:
    sent = i * 10 * MS
    tokens = [sent + 5 * MS, sent + 6 * MS, sent + 8 * MS]  # 3 tokens in 2 events' time
    return Record(
        step=0,
        id=i,
        warmup=False,
        request_id=f"r{i}",
        prompt_tokens_requested=10,
        max_tokens=3,
        sent_ns=sent,
        first_token_ns=tokens[0],
        last_token_ns=tokens[-1],
        end_ns=sent + 9 * MS,
        token_ns=tokens,
        output_events=3,
        output_tokens_server=6,  # two tokens an event, as a speculating server sends
        ok=True,
        endpoint=endpoint,
        model=model,
    )


def scenario(**target: object) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "t",
            "target": {"url": "http://127.0.0.1:9", "api": "openai-chat", "model": "m", **target},
            "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 4},
            "sla": {"e2e_ms": {"p50": 1}},  # missed: the time split then says what grew
        }
    )


def test_the_tally_adds_each_record_to_its_step_endpoint_and_model() -> None:
    tally = StepTally.of(2, ["a", "b"])
    for r in [rec(0, endpoint=0, model="a"), rec(1, endpoint=1, model="b"), rec(2, endpoint=1)]:
        tally.add(r)
    tally.add(rec(3, endpoint=7, model="z"))  # an endpoint and a model outside the lists
    assert tally.whole.total == 4
    assert [c.total for c in tally.endpoints] == [1, 2]
    assert {name: c.total for name, c in tally.models.items()} == {"a": 1, "b": 1}
    one = StepTally.of(1)
    one.add(rec(0, endpoint=0))
    assert one.endpoints == [] and one.models == {} and one.whole.total == 1


class Telemetry:
    def __init__(self) -> None:
        self.asked: list[tuple[int, int, int]] = []

    def step_stats(self, start_ns: int, end_ns: int, output_tokens: int) -> StepTelemetry:
        self.asked.append((start_ns, end_ns, output_tokens))
        window = TelemetryWindow(start_ns=start_ns, end_ns=end_ns, duration_s=0.0)
        return StepTelemetry(window=window, output_tokens=output_tokens)


def test_what_the_live_run_saw_is_written_by_step_summary() -> None:
    tally = StepTally.of(1)
    for i in range(4):
        tally.add(rec(i))
    e2e = PhaseTime(count=4, mean_ms=6.0, metric="e2e")
    server = ServerCounters(
        prefix_cache=PrefixCacheStats(queries_tokens=10, hits_tokens=0, hit_rate=0, source="x"),
        spec_decode=SpecDecodeStats(
            drafts=4, draft_tokens=8, accepted_tokens=4, emitted_tokens=8, source="x"
        ),
        time_split=TimeSplit(engine="vllm", server_e2e=e2e),
    )
    telemetry = Telemetry()
    point = Point("concurrency", 1)
    extras = StepExtras(server=server, telemetry=telemetry)
    step = step_summary(
        scenario(), 0, point, tally, metrics_profile="loadgen", endpoints=["u"], extras=extras
    )
    assert step.prefix_cache is None  # no prefix shared, nothing hit: not shown
    assert step.spec_decode is not None and step.spec_decode.tokens_per_event == 2.0
    split = step.time_split
    assert split is not None and split.client_e2e_mean_ms == step.e2e_ms.mean == 9.0
    assert split.network_ms == 3.0  # client E2E mean - server E2E mean
    assert telemetry.asked == [(0, 39 * MS, 24)]  # the step's window and output tokens
    assert step.telemetry is not None and step.telemetry.output_tokens == 24
    shared = StepExtras(
        server=ServerCounters(prefix_cache=server.prefix_cache, shares_prefixes=True)
    )
    again = step_summary(
        scenario(), 0, point, tally, metrics_profile="loadgen", endpoints=["u"], extras=shared
    )
    assert again.prefix_cache == server.prefix_cache and again.telemetry is None
    plain = step_summary(scenario(), 0, point, tally, metrics_profile="loadgen", endpoints=["u"])
    assert (plain.prefix_cache, plain.spec_decode, plain.time_split) == (None, None, None)


def test_the_step_loop_writes_no_field_of_a_step_summary() -> None:
    """run/ hands what it saw to step_summary: no ``step.<field> = ...`` there."""
    found = [
        f"{path.name}:{node.lineno} step.{t.attr}"
        for path in sorted((PKG / "run").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "step"
    ]
    assert found == []
