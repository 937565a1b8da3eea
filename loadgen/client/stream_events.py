"""One read's SSE events applied to its :class:`~loadgen.records.Record`: the per-chunk work.

Owns what each event of a stream writes on the record, once the transport has
stamped the read and the SSE splitter has cut it into payloads
(:func:`apply_events`, called by ``Requester`` once a read), and how a read's
payloads become deltas through the adapter (:func:`parse_events`: several in
one JSON array, the common case of a busy server, else one by one).

Values from the wire: the adapters read every value through
:mod:`loadgen.client.adapters.event_values`, so a delta holds only checked values and
an event that is not of the protocol ends the request as ``malformed_event``.
A usage block whose counts cannot be believed (not an integer in
0..10,000,000) does not: it is ignored, the request's tokens are counted from
its stream and the record says so (``usage_ignored``). An SSE ``event:
error`` frame ends the request as ``stream_error`` with the server's message,
as an ``error`` field in an event does. A token event with tool-call fragments
(``Delta.tool_parts``) also counts ``tool_events`` and ``tool_calls`` and
stamps ``first_tool_ns``; ``workload.cancel``'s ``after_tokens`` is one compare
per token event.
"""

from __future__ import annotations

from loadgen.client.adapters import Adapter
from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.event_values import event_error
from loadgen.client.record_marks import (
    cut_by_client,
    fail,
    finish,
    first_answer,
    reasoning,
    slack,
)
from loadgen.client.sse import ErrorEvent
from loadgen.client.validity import ToolCalls, tool_event
from loadgen.records import Record

__all__ = ["NEVER", "apply_events", "parse_events"]

#: what the adapters' parsing raises for an event that is not of the protocol (not JSON:
#: orjson.JSONDecodeError; JSON of the wrong shape: wire.MalformedEvent; both ValueError)
_MALFORMED = ValueError
#: a point no stream reaches (no ``workload.cancel``): token events, or a clock value in ns
NEVER = 2**62


def apply_events(
    rec: Record,
    adapter: Adapter,
    payloads: list[bytes],
    arrived: int,
    text: list[str] | None,
    typed: bool = False,
    calls: ToolCalls | None = None,
    stop: int = NEVER,
    late: int = 0,
    exact_end: bool = False,
) -> int | None:
    """Apply one chunk's events to ``rec``; once the stream is over, how many of the
    payloads it took (the rest came after the end), else None. ``stop``: token events
    after which the client aborts (``workload.cancel``; one compare per token event).

    ``text`` collects the answer's text when the spec asked for it (else None);
    ``typed``: an :class:`ErrorEvent` may be among the payloads; ``calls`` assembles
    the answer's tool calls when they are to be checked (else None).

    ``late``: the read's slack, how much earlier than ``arrived`` its first bytes may
    have come; every token event it carried gets it (``Record.token_slack_ns``) but
    the read's very last payload when ``exact_end`` (the stamp is that of the read's
    last bytes, and the read ended with that event): an event followed in the same
    read by any other (a usage chunk, ``[DONE]``) may have come that much earlier.
    """
    before = len(rec.token_ns)
    used, last_token = _apply(rec, adapter, payloads, arrived, text, typed, calls, stop)
    if late:
        shared = len(rec.token_ns) - before
        if exact_end and last_token == len(payloads) - 1:
            shared -= 1  # the read ended with its last token event: that stamp is exact
        if shared > 0:
            slack(rec, before, shared, late)
    return used


def _apply(
    rec: Record,
    adapter: Adapter,
    payloads: list[bytes],
    arrived: int,
    text: list[str] | None,
    typed: bool,
    calls: ToolCalls | None,
    stop: int,
) -> tuple[int | None, int]:
    """:func:`apply_events`' work: (payloads taken once the stream is over, else None;
    the index of the last payload that was a token event, -1 for none)."""
    deltas, failure = parse_events(adapter, payloads, typed)
    stamp = rec.token_ns.append
    last_token = -1
    for i, d in enumerate(deltas):
        if d is None:  # [DONE]
            finish(rec, adapter.ends_with_done)
            return i + 1, last_token
        if d.tokens:
            last_token = i
            if d.reasoning:
                reasoning(rec, d.tokens, arrived)
            else:
                if rec.first_answer_ns is None:
                    first_answer(rec, arrived)
                if text is not None:
                    text.append(d.text)
                if d.tool_parts:
                    tool_event(rec, d.tool_parts, arrived, calls)
            stamp(arrived)
            rec.output_events += d.tokens
            rec.output_chars += len(d.text)
            if rec.output_events >= stop and d.finish_reason is None and not d.final:
                cut_by_client(rec)
                return i + 1, last_token
        if d.finish_reason is not None:
            rec.finish_reason = d.finish_reason
        if d.completion_tokens is not None:
            rec.output_tokens_server = d.completion_tokens
            if d.reasoning_tokens is not None:
                rec.reasoning_tokens_server = d.reasoning_tokens
        if d.prompt_tokens is not None:
            rec.prompt_tokens_server = d.prompt_tokens
            if d.cached_tokens is not None:
                rec.cached_tokens_server = d.cached_tokens
        if d.usage_ignored is not None:
            rec.usage_ignored = d.usage_ignored
        if d.error is not None:
            fail(rec, "stream_error", d.error)
            return i + 1, last_token
        if d.final:
            rec.response_id = d.response_id
            finish(rec, not adapter.ends_with_done)
            return i + 1, last_token
    if failure is not None:
        fail(rec, *failure)
        return len(deltas) + 1, last_token
    return None, last_token


def parse_events(
    adapter: Adapter, payloads: list[bytes], typed: bool = False
) -> tuple[list[Delta | None], tuple[str, str] | None]:
    """The events of one read (None for ``[DONE]``), up to the first bad one, and its error.

    Several events are parsed in one call (one JSON array), the common case
    of a busy server; if that fails, one by one, so every event before the
    bad one still counts. ``typed``: an :class:`ErrorEvent` may be among them
    (then one by one: it ends the request as ``stream_error``).
    """
    if len(payloads) > 1 and not typed:
        done = payloads[-1] == b"[DONE]"
        try:
            many: list[Delta | None] = list(adapter.parse_many(payloads[:-1] if done else payloads))
        except _MALFORMED:
            pass  # find the bad one below
        else:
            if done:
                many.append(None)
            return many, None
    out: list[Delta | None] = []
    parse = adapter.parse
    for payload in payloads:
        if type(payload) is ErrorEvent:
            return out, ("stream_error", event_error(payload))
        if payload == b"[DONE]":
            out.append(None)
            break
        try:
            out.append(parse(payload))
        except _MALFORMED as exc:
            return out, ("malformed_event", f"{exc}: {payload[:120]!r}")
    return out, None
