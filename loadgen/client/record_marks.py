"""What a request's answer writes on its :class:`~loadgen.records.Record`: its first
answer and reasoning stamps, its end, its failure, the media it carried.

Plain functions on the record, shared by the streaming path
(:mod:`loadgen.client.request`) and the whole-body one
(:mod:`loadgen.client.whole_body`). Called per event where noted: each is one
global lookup and one call, as when they lived in the requester's module.
"""

from __future__ import annotations

from loadgen.client.transport import Response
from loadgen.records import Record
from loadgen.workload import RequestSpec

__all__ = [
    "count_media",
    "cut_by_client",
    "fail",
    "finish",
    "first_answer",
    "keep_text",
    "phases",
    "reasoning",
    "slack",
    "too_many",
]


def count_media(rec: Record, spec: RequestSpec) -> None:
    """What the request carries beyond text, counted on its record."""
    for m in spec.media:
        if m.kind == "image":
            rec.images += 1
            rec.image_pixels += m.width * m.height
        else:
            rec.audio_s += m.seconds


def phases(rec: Record, resp: Response) -> None:
    """The transport's stamps of the request's phases, once its headers are in (once per
    request). Its head stamp (the h1 transport's: the kernel's) replaces the one the
    requester took as the context opened; a response without phases (a test's) has none."""
    p = getattr(resp, "phases", None)
    if p is None:
        return
    rec.new_connection = p.new_connection
    rec.connect_start_ns = p.connect_start_ns
    rec.connect_ns = p.connect_ns
    rec.tls_ns = p.tls_ns
    rec.first_byte_ns = p.first_byte_ns
    if p.headers_ns is not None:
        rec.headers_ns = p.headers_ns


def slack(rec: Record, first: int, count: int, late_ns: int) -> None:
    """Token events ``first`` .. ``first + count - 1`` may have come up to ``late_ns``
    before their stamp (they shared a read with a later event: off the common path)."""
    s = rec.token_slack_ns
    if s is None:
        s = rec.token_slack_ns = []
    if len(s) < first:
        s.extend([0] * (first - len(s)))
    s.extend([late_ns] * count)


def too_many(rec: Record, limit: int) -> None:
    fail(rec, "too_many_tokens", f"more than {limit} token events for max_tokens {rec.max_tokens}")


def first_answer(rec: Record, arrived: int) -> None:
    rec.first_answer_ns = arrived
    if rec.first_token_ns is None:
        rec.first_token_ns = arrived


def reasoning(rec: Record, tokens: int, arrived: int) -> None:
    """A reasoning token event: off the common path, so answer-only streams pay nothing."""
    rec.reasoning_events += tokens
    if rec.first_reasoning_ns is None:
        rec.first_reasoning_ns = arrived
        if rec.first_token_ns is None:
            rec.first_token_ns = arrived


def keep_text(rec: Record, text: list[str] | None) -> None:
    if text is not None:
        rec.answer_text = "".join(text)


def finish(rec: Record, expected_end: bool) -> None:
    if rec.token_ns:
        rec.last_token_ns = rec.token_ns[-1]
    if expected_end:
        rec.ok = True
    else:
        fail(rec, "incomplete_stream", "unexpected end marker for this protocol")


def fail(rec: Record, kind: str, detail: str) -> None:
    rec.ok = False
    rec.error_kind = kind
    rec.error_detail = detail[:200]
    if rec.token_ns and rec.last_token_ns is None:
        rec.last_token_ns = rec.token_ns[-1]


def cut_by_client(rec: Record) -> None:
    """The client aborted the stream on purpose (``workload.cancel``): not ok, yet no
    failure (no ``error_kind``); the tokens received so far stay on the record."""
    rec.ok = False
    rec.cancelled_by_client = True
    if rec.token_ns and rec.last_token_ns is None:
        rec.last_token_ns = rec.token_ns[-1]
