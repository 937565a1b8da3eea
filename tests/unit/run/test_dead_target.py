"""load.stop_on_errors: connection failures before the first answer trip the watch."""

from __future__ import annotations

from loadgen.records import Record
from loadgen.run.dead_target import DeadTargetWatch
from loadgen.scenario.loadspec import StopOnErrors

MS = 1_000_000


def rec(i: int, kind: str | None = "connect_error", end_ms: float = 0.0) -> Record:
    return Record(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=1, max_tokens=1,
        ok=kind is None, error_kind=kind, sent_ns=int(end_ms * MS), end_ns=int(end_ms * MS) + 1,
    )  # fmt: skip


def test_it_trips_on_the_nth_connection_failure_once() -> None:
    watch = DeadTargetWatch(StopOnErrors(requests=5, seconds=60))
    trips = [watch.observe(rec(i, end_ms=i)) for i in range(8)]
    assert trips == [False, False, False, False, True, False, False, False]
    assert watch.reason is not None and "the first 5 requests all failed to connect" in watch.reason


def test_it_trips_after_the_seconds_of_nothing_but_failures() -> None:
    watch = DeadTargetWatch(StopOnErrors(requests=1000, seconds=2))
    assert not watch.observe(rec(0, "connect_timeout", end_ms=0))
    assert not watch.observe(rec(1, "connect_timeout", end_ms=1999))
    assert watch.observe(rec(2, "connect_timeout", end_ms=2000))
    assert (
        watch.reason is not None and "3 requests" in watch.reason and "over 2.0 s" in watch.reason
    )


def test_an_answer_disarms_it_for_the_rest_of_the_run() -> None:
    for answer in (None, "http_500", "first_token_timeout"):
        watch = DeadTargetWatch(StopOnErrors(requests=2, seconds=60))
        assert not watch.observe(rec(0))
        assert not watch.observe(rec(1, answer))  # the server is there
        assert not any(watch.observe(rec(i)) for i in range(2, 50))
        assert watch.reason is None


def test_cancelled_rows_neither_count_nor_disarm_and_off_never_trips() -> None:
    watch = DeadTargetWatch(StopOnErrors(requests=2, seconds=60))
    assert not watch.observe(rec(0, "cancelled"))
    assert not watch.observe(rec(1))
    assert watch.observe(rec(2))
    off = DeadTargetWatch(None)
    assert not any(off.observe(rec(i)) for i in range(100))


def test_off_in_the_scenario_means_no_watch() -> None:
    from loadgen.scenario import parse_scenario

    text = (
        "target: {url: 'http://127.0.0.1:9', model: m}\n"
        "load: {mode: concurrency, concurrency: [1], requests_per_step: 2, stop_on_errors: %s}\n"
    )
    assert parse_scenario(text % "off", "t.yaml").load.stop_on_errors is None
    rule = parse_scenario(text % "{requests: 7}", "t.yaml").load.stop_on_errors
    assert rule is not None and (rule.requests, rule.seconds) == (7, 2.0)
    default = parse_scenario(text % "{}", "t.yaml").load.stop_on_errors
    assert default is not None and default.requests == 20
