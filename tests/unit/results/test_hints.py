"""With several endpoints, an error's hint names the endpoint its example failed at."""

from __future__ import annotations

from loadgen.records import Record
from loadgen.results.hints import TargetFacts, error_lines

URLS = ("http://a:1", "http://b:2")


def failed(i: int, endpoint: int | None, kind: str = "connect_error") -> Record:
    return Record(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=1, max_tokens=1,
        ok=False, error_kind=kind, error_detail="refused", endpoint=endpoint,
    )  # fmt: skip


def test_the_hint_names_the_endpoint_that_failed() -> None:
    facts = TargetFacts(url=URLS[0], model="m", urls=URLS)
    lines = error_lines([failed(0, 1), failed(1, 1)], facts)
    assert lines == [
        "  errors: 2 connect_error: refused",
        "    hint: is the server running at http://b:2?",
    ]


def test_one_endpoint_hints_as_before() -> None:
    facts = TargetFacts(url=URLS[0], model="m")
    lines = error_lines([failed(0, None)], facts)
    assert lines[-1] == "    hint: is the server running at http://a:1?"
