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


def test_a_refused_key_names_its_variable_not_a_field_to_set() -> None:
    """An unset api_key_env is refused at load: a 401 then means the key itself is wrong."""
    from loadgen.results.hints import hint

    facts = TargetFacts(url=URLS[0], model="m", api_key_env="OPENAI_API_KEY")
    text = hint("http_401", "", facts)
    assert text is not None and "$OPENAI_API_KEY" in text and "check the key" in text
    assert "set target.api_key_env" not in text
    forbidden = hint("http_403", "", facts)
    assert forbidden is not None and "$OPENAI_API_KEY" in forbidden
    none = hint("http_401", "", TargetFacts(url=URLS[0], model="m"))
    assert none is not None and "set target.api_key_env" in none


def test_warm_up_failures_are_named_apart_so_the_counts_agree_with_the_table() -> None:
    """The step's table counts measured requests; the error line names the warm-ups in it."""
    rows = [failed(i, None) for i in range(5)]
    for r in rows[:2]:
        r.warmup = True
    lines = error_lines(rows, TargetFacts(url=URLS[0], model="m"))
    assert lines[0] == "  errors: 5 connect_error (2 of them warm-up or ramp-up): refused"
    assert error_lines(rows[2:], TargetFacts(url=URLS[0], model="m"))[0] == (
        "  errors: 3 connect_error: refused"
    )
