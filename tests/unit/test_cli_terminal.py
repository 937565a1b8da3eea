"""What the terminal says: errors by kind with an example and a hint, progress, the verdict.

Pure functions only; tests/integration/test_terminal.py runs the same through
the CLI against small failing servers.
"""

from __future__ import annotations

import pytest

from loadgen.clock import NS_PER_S
from loadgen.errors import TargetError
from loadgen.records import Record
from loadgen.report.terminal.console import format_step, format_verdict, step_warning_lines
from loadgen.report.terminal.progress import WIDTH, Progress
from loadgen.results.hints import TargetFacts, error_lines, hint, unusable_reason
from loadgen.summary import (
    ClientHealth,
    ClockAnchor,
    LoadPoint,
    RequestCounts,
    StepSummary,
    Summary,
    Verdict,
)
from loadgen.target.preflight import pick_model

URL = "http://127.0.0.1:9"


def failed(kind: str, detail: str, i: int = 0) -> Record:
    return Record(
        step=0,
        id=i,
        warmup=False,
        request_id=f"r{i}",
        prompt_tokens_requested=8,
        max_tokens=8,
        error_kind=kind,
        error_detail=detail,
    )


def test_errors_by_kind_most_frequent_first_with_one_example_and_a_hint() -> None:
    records = [
        failed("connect_error", f"Connect call failed ('127.0.0.1', 9) #{i}", i) for i in range(3)
    ]
    records.append(failed("http_500", "boom"))
    records.append(failed("cancelled", "interrupted"))  # never counted as an error
    lines = error_lines(records, TargetFacts(URL, "m"))
    assert lines == [
        "  errors: 3 connect_error: Connect call failed ('127.0.0.1', 9) #0",
        f"    hint: is the server running at {URL}?",
        "  errors: 1 http_500: boom",
    ]


def test_a_long_detail_is_cut_to_one_line() -> None:
    lines = error_lines([failed("protocol_error", "x\n" * 200)], TargetFacts(URL, "m"))
    assert len(lines) == 1 and "\n" not in lines[0] and lines[0].endswith("...")
    assert len(lines[0]) < 120


@pytest.mark.parametrize(
    ("kind", "detail", "facts", "expected"),
    [
        ("connect_error", "refused", TargetFacts(URL, "m"), f"is the server running at {URL}?"),
        (
            "http_404",
            "",
            TargetFacts("http://h:8000/v1", "m"),
            "target.url ends in /v1 and loadgen adds /v1/...: drop /v1",
        ),
        (
            "http_404",
            "",
            TargetFacts("http://h:8000/v1/", "m", ["m"]),
            "drop /v1",
        ),
        (
            "http_404",
            "model not found",
            TargetFacts(URL, "llama", ["qwen-7b", "mistral"]),
            "model 'llama' is not served; the server lists: qwen-7b, mistral",
        ),
        (
            "http_400",
            "",
            TargetFacts(URL, "llama", []),
            "model 'llama' is not served; the server lists: none",
        ),
        (
            "connect_error",
            "TLS: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed",
            TargetFacts("https://h", "m"),
            "give its CA as target.tls.ca_file",
        ),
        (
            "connect_error",
            "[Errno -2] Name or service not known",
            TargetFacts("http://no-such-host.invalid:8000", "m"),
            "the host name 'no-such-host.invalid' does not resolve: check target.url",
        ),
        ("http_401", "", TargetFacts(URL, "m", ["m"]), "set target.api_key_env"),
        ("first_token_timeout", "", TargetFacts(URL, "m"), "target.timeouts_s.first_token"),
    ],
)
def test_hints(kind: str, detail: str, facts: TargetFacts, expected: str) -> None:
    text = hint(kind, detail, facts)
    assert text is not None and expected in text


def test_no_hint_where_no_cause_is_known() -> None:
    assert hint("http_500", "oops", TargetFacts(URL, "m", ["m"])) is None
    assert hint("http_404", "", TargetFacts("http://h/v1x", "m", ["m"])) is not None  # generic


def step(index: int, ok: int, errors: dict[str, int], *, interrupted: bool = False) -> StepSummary:
    return StepSummary(
        index=index,
        load=LoadPoint(mode="concurrency", concurrency=1),
        requests=RequestCounts(
            total=ok + sum(errors.values()), ok=ok, failed=sum(errors.values()), errors=errors
        ),
        interrupted=interrupted,
    )


def summary(*steps: StepSummary) -> Summary:
    return Summary(
        loadgen_version="0",
        name="t",
        run_id="r",
        target_url=URL,
        api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0),
        steps=list(steps),
    )


def test_a_run_with_no_success_is_unusable() -> None:
    reason = unusable_reason(summary(step(0, 0, {"connect_error": 4}), step(1, 0, {"http_404": 2})))
    assert reason is not None
    assert reason.startswith(f"target unusable: no request succeeded at {URL}")
    assert "4 connect_error, 2 http_404" in reason


def test_one_success_or_an_interruption_is_not_unusable() -> None:
    assert unusable_reason(summary(step(0, 1, {"connect_error": 4}))) is None
    assert unusable_reason(summary()) is None
    cut = summary(step(0, 0, {"connect_error": 4}, interrupted=True))
    assert unusable_reason(cut) is None


def test_model_auto_takes_the_only_listed_model() -> None:
    assert pick_model(["qwen"], URL) == "qwen"
    with pytest.raises(TargetError, match=r"lists 2 models \(a, b\); name one in target.model"):
        pick_model(["a", "b"], URL)
    with pytest.raises(TargetError, match=r"lists no model \(none\)"):
        pick_model([], URL)
    with pytest.raises(TargetError, match="did not list the served models"):
        pick_model(None, URL)


class FakeClock:
    """The monotonic time Progress is given, moved by hand."""

    def __init__(self) -> None:
        self.ns = 10 * NS_PER_S

    def __call__(self) -> int:
        return self.ns


def test_progress_shows_step_i_of_n_and_time_left_within_80_columns() -> None:
    clock = FakeClock()
    p = Progress(enabled=False, now=clock)
    p.start_step("[3/7] concurrency 16", None, duration_s=30.0)
    line = p.line()
    assert line.startswith("[3/7] concurrency 16 · 0 req · 30 s left · 0.0 req/s")
    assert len(line) <= WIDTH
    clock.ns += 31 * NS_PER_S  # past the end: in-flight requests finish
    assert " · 0 req · draining · " in p.line()
    p.start_step("[2/2] rate 1000", 400)
    clock.ns += 2 * NS_PER_S  # two seconds in, 100 done
    for i in range(100):
        p.record(failed("http_500", "", i))
    line = p.line()
    assert line.startswith("[2/2] rate 1000 · 100/400 req, 100 failed · 6 s left · 50.0 req/s")
    assert len(line) <= WIDTH


def test_progress_without_a_known_end_shows_the_time_passed() -> None:
    p = Progress(enabled=False, now=FakeClock())
    p.start_step("[1] rate 4", None)
    assert p.line().startswith("[1] rate 4 · 0 req · 0 s · ")


def test_a_long_progress_line_drops_ttft_and_rate_before_it_is_cut() -> None:
    clock = FakeClock()
    p = Progress(enabled=False, now=clock)
    p.start_step("[12/12] concurrency 256", 20000)
    clock.ns += 10 * NS_PER_S
    p._state.done, p._state.failed = 12345, 1234
    p._state.ttft_ms.append(1234.0)
    line = p.line()
    assert len(line) <= WIDTH
    assert line.startswith("[12/12] concurrency 256 · 12345/20000 req, 1234 failed · 6 s left")
    assert not line.endswith(" ")
    p.start_step("[12/12] trace 0.000125 (a very long label for a load point, far too long)", 9)
    assert len(p.line()) <= WIDTH


def test_step_warnings_are_apart_from_the_table() -> None:
    s = step(0, 1, {})
    s.client = ClientHealth(warnings=["loop lag p99 9 ms"])
    assert step_warning_lines(s) == ["  warning: loop lag p99 9 ms"]
    assert "warning" not in format_step(s, warnings=False)
    assert "  warning: loop lag p99 9 ms" in format_step(s)


def test_the_verdict_and_the_results_path_are_the_last_lines() -> None:
    s = summary(step(0, 1, {}))
    s.verdict = Verdict(mode="concurrency", text="max concurrency meeting the SLA: 1")
    assert format_verdict(s, "results/x") == (
        "verdict: max concurrency meeting the SLA: 1\nresults: results/x"
    )
    assert format_verdict(summary(), "r").startswith("verdict: no step ran")


@pytest.mark.parametrize("version", ["HTTP/2", "HTTP/1.1"])
def test_the_httpx_transport_keeps_the_protocol_the_server_answered_in(version: str) -> None:
    import asyncio

    import httpx

    from loadgen.client.httpx_transport import HttpxTransport
    from loadgen.client.transport import HttpRequest

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=b"data: [DONE]\n\n", extensions={"http_version": version.encode()}
        )

    async def one() -> set[str]:
        t = HttpxTransport(limit=1, connect_timeout_s=1.0)
        await t.aclose()
        t._client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
        async with t.open(HttpRequest("http://h/v1/chat/completions", b"{}", {})) as resp:
            assert resp.status == 200
        await t.aclose()
        return t.http_versions

    assert asyncio.run(one()) == {version}


def test_the_step_table_counts_failures_by_kind_in_words() -> None:
    text = format_step(step(0, 1, {"http_500": 1, "connect_error": 3}))
    assert "  requests  1 ok, 4 failed (3 connect_error, 1 http_500), 0 warm-up" in text
