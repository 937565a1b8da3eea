"""A non-streaming answer, read whole: one JSON body and what it carried.

Owns :func:`read_whole_body`, the requester's path for ``stream: false`` and
for the pooling APIs (embeddings, rerank, never streamed): the body is read up
to its bound (``event_too_large``), parsed by the adapter's ``parse_body``
(``malformed_event``), and its last byte is the first and last token time.
Post-processing of what the answer carried: the server's usage, the answer
text, tool calls (:func:`~loadgen.client.validity.tool_event`), and a pooling
answer's vector count and dimension (:class:`~loadgen.client.pooling.PoolingCheck`).
"""

from __future__ import annotations

from loadgen.client.adapters import Adapter
from loadgen.client.pooling import PoolingCheck
from loadgen.client.record_marks import fail
from loadgen.client.transport import Response
from loadgen.client.validity import ToolCalls, tool_event
from loadgen.clock import now_ns
from loadgen.records import Record

__all__ = ["read_whole_body"]

#: what the adapters' parsing raises for a body that is not of the protocol (ValueError)
_MALFORMED = ValueError


async def read_whole_body(
    rec: Record,
    resp: Response,
    adapter: Adapter,
    limit: int,
    pooling: PoolingCheck,
    text: list[str] | None,
    calls: ToolCalls | None = None,
    exact: bool = True,
) -> int:
    """A non-streaming answer: one JSON body of at most ``limit`` bytes; its last byte is the
    only token time. ``text`` collects the answer's text and ``calls`` its tool calls when
    they are kept (else None); a pooling answer is checked by ``pooling``. Returns the
    earliest its last byte may have come (0: no read): its read's stamp, less the read's
    slack where the stamps are not ``exact``."""
    parts: list[bytes] = []
    last = size = earliest = 0
    async for arrived, data, slack in resp.chunks():
        parts.append(data)
        last = arrived
        earliest = arrived if exact else arrived - slack
        size += len(data)
        if size > limit:
            fail(rec, "event_too_large", f"the response body passed {limit} bytes")
            return earliest
    try:
        d = adapter.parse_body(b"".join(parts))
    except _MALFORMED as exc:
        fail(rec, "malformed_event", f"{exc}: {b''.join(parts)[:120]!r}")
        return earliest
    rec.first_token_ns = rec.first_answer_ns = rec.last_token_ns = last or now_ns()
    rec.output_tokens_server = d.completion_tokens
    rec.prompt_tokens_server = d.prompt_tokens
    rec.cached_tokens_server = d.cached_tokens
    rec.reasoning_tokens_server = d.reasoning_tokens
    rec.usage_ignored = d.usage_ignored
    rec.output_chars = len(d.text)
    if text is not None:
        text.append(d.text)
    if d.tool_parts:
        tool_event(rec, d.tool_parts, rec.last_token_ns, calls)
    rec.finish_reason = d.finish_reason
    rec.response_id = d.response_id
    if rec.inputs is not None:  # a pooling answer (embeddings, rerank)
        rec.vector_dim = d.vector_dim
        if (failure := pooling.failure(rec.inputs, d)) is not None:
            fail(rec, *failure)
            return earliest
    rec.ok = True
    return earliest
