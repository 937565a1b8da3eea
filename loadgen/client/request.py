"""Send one request and turn its stream into a :class:`~loadgen.records.Record`.

Stamp first, parse later: the transport stamps each chunk as it arrives; the
SSE splitter and the adapter run after. Every failure is a row with an
``error_kind``; nothing but cancellation escapes :meth:`Requester.send`.

Reasoning and answer: ``first_token_ns`` is the first token event of any
kind; ``first_reasoning_ns`` and ``first_answer_ns`` split it by what the
adapter said the event carried. The answer's text is kept only for specs
with ``keep_text`` (multi-turn sessions need it for the next turn), and with
it the answer's first tool call, when tools are offered (an agent's next call
carries it: ``answer_tool_name``, ``answer_tool_arguments``).

Deadlines (from ``target.timeouts_s``): first token after send, idle gap
between chunks once tokens flow (enforced within +1/8 of the idle limit, to
avoid re-arming a timer per chunk), and total.

Bounds (:class:`RequestLimits`), so a hostile server cannot grow our memory:
one SSE event's bytes (``event_too_large``), a non-streaming body's bytes
(``event_too_large``), and token events per request, a multiple of
``max_tokens`` (``too_many_tokens``, checked once per chunk). A stream that
never ends is thus bounded by tokens and by the total timeout.

What one read's events write on the record (values from the wire checked by
the adapters, ``malformed_event``, ``stream_error``, ``usage_ignored``, tool
calls) is :mod:`loadgen.client.stream_events`. A 3xx answer is the request's
answer (``http_3xx``): redirects are not followed.

Tool calls and structured output: a token event with tool-call fragments
(``Delta.tool_parts``) also counts ``tool_events`` and ``tool_calls`` and
stamps ``first_tool_ns``. With an :class:`~loadgen.client.validity.OutputCheck`
(tools or a response format configured) the fragments and the answer text are
kept, and a successful answer is validated once its stream has ended
(``valid_output``, ``invalid_detail``).

Users who stop (``workload.cancel``): a spec with ``cancel_after_tokens``
ends after that many token events, one with ``cancel_after_ns`` when that
long after the send has passed (the deadlines' timer); either way the
transport closes the connection (``Response.abort``: never reused, the
server sees the client go) and the record is ``cancelled_by_client``, not
ok and with no ``error_kind``, keeping the tokens received.

A non-streaming answer (``stream: false``, the pooling APIs) is read whole by
:mod:`loadgen.client.whole_body`; what events write on the record (first answer,
reasoning, end, failure) are :mod:`loadgen.client.record_marks`' functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from loadgen.client.adapters import Adapter
from loadgen.client.adapters.base import RawBody
from loadgen.client.pooling import PoolingCheck
from loadgen.client.record_marks import (
    count_media,
    cut_by_client,
    fail,
    keep_text,
    phases,
    too_many,
)
from loadgen.client.routing import Router
from loadgen.client.sse import MAX_EVENT_BYTES, EventTooLarge, SseSplitter
from loadgen.client.stream_events import NEVER, apply_events
from loadgen.client.transport import HttpRequest, Transport, TransportError
from loadgen.client.validity import OutputCheck, ToolCalls, keep_tool_call
from loadgen.client.whole_body import read_whole_body
from loadgen.clock import NS_PER_S, loop_time_at, now_ns
from loadgen.records import Record
from loadgen.workload import RequestSpec

__all__ = ["RequestLimits", "RequestTimeouts", "Requester"]


@dataclass(slots=True, frozen=True)
class RequestTimeouts:
    first_token_ns: int
    idle_ns: int
    total_ns: int

    @classmethod
    def from_seconds(cls, first_token: float, idle: float, total: float) -> RequestTimeouts:
        return cls(int(first_token * NS_PER_S), int(idle * NS_PER_S), int(total * NS_PER_S))


@dataclass(slots=True, frozen=True)
class RequestLimits:
    """Memory bounds of one request; exceeding one ends it with its own error kind."""

    #: bytes of one SSE event (``event_too_large``)
    event_bytes: int = MAX_EVENT_BYTES
    #: bytes of a non-streaming answer's body (``event_too_large``)
    body_bytes: int = 64 * MAX_EVENT_BYTES
    #: token events allowed: ``tokens_factor * max_tokens + tokens_extra`` (``too_many_tokens``)
    tokens_factor: int = 4
    tokens_extra: int = 16

    def max_tokens(self, max_tokens: int) -> int:
        return self.tokens_factor * max_tokens + self.tokens_extra


class Requester:
    """Sends requests of one target through one transport.

    ``base_url`` is one URL, or several (replicas of one model): each request
    then goes to the endpoint :attr:`router` picks by ``routing``
    (:mod:`loadgen.client.routing`), and its record names that endpoint's index.
    """

    def __init__(
        self,
        transport: Transport,
        adapter: Adapter,
        *,
        base_url: str | Sequence[str],
        model: str,
        extra_body: dict[str, Any],
        headers: dict[str, str],
        timeouts: RequestTimeouts,
        run_id: str,
        stream: bool = True,
        limits: RequestLimits | None = None,
        routing: str = "round_robin",
        route_first: int = 0,
        output_check: OutputCheck | None = None,
    ) -> None:
        self.transport = transport
        #: a read's stamp is its last bytes' (the kernel's): its last event is exact
        self._exact = getattr(transport, "exact_stamps", False)
        self._adapter = adapter
        self._stream_mode = stream
        path = adapter.path if stream else adapter.path_no_stream
        bases = [base_url] if isinstance(base_url, str) else list(base_url)
        self._urls = [b.rstrip("/") + path for b in bases]
        #: None for one endpoint (records then name none)
        self.router = Router(len(bases), routing, first=route_first) if len(bases) > 1 else None
        self._model = model
        self._extra = extra_body
        accept = "text/event-stream" if stream else "application/json"
        self._headers = {"Content-Type": "application/json", "Accept": accept}
        self._headers.update(headers)
        self._timeouts = timeouts
        self._limits = limits or RequestLimits()
        self._run_id = run_id
        self._pooling = PoolingCheck(extra_body)  # pooling APIs (embeddings, rerank)
        #: records of requests cut short by cancellation (Ctrl-C), kept for the report
        self.cancelled: list[Record] = []
        #: validates each answer's tool calls or structured text (None: nothing to check)
        self.output_check = output_check

    def take_read_lag(self) -> tuple[int, float, int] | None:
        """How late the transport read its sockets since the last call: (count, p99 ns, max ns);
        None where the transport cannot see it (its stamps are taken as the loop reads)."""
        lag = self.transport.read_lag
        return None if lag is None else lag.take()

    def http_versions(self) -> set[str]:
        """The HTTP versions responses came back in, where the transport records them."""
        return set(getattr(self.transport, "http_versions", None) or ())

    async def aclose(self) -> None:
        """Close the transport's connections."""
        await self.transport.aclose()

    def build(
        self, spec: RequestSpec, step: int, endpoint: int | None = None
    ) -> tuple[Record, HttpRequest]:
        rid = f"{self._run_id}-{step}-{spec.index}"
        body = self._adapter.body(spec, spec.model or self._model, self._extra, self._stream_mode)
        headers = dict(self._headers)
        headers["x-request-id"] = rid
        if type(body) is RawBody:  # a multipart upload, say: sent as the adapter made it
            payload = body.data
            headers["Content-Type"] = body.content_type
        else:
            payload = orjson.dumps(body)
        rec = Record(
            step=step,
            id=spec.index,
            warmup=spec.warmup,
            request_id=rid,
            prompt_tokens_requested=spec.prompt_tokens,
            max_tokens=spec.max_tokens,
            ramp=spec.ramp,
            session=spec.session,
            turn=spec.turn,
            endpoint=endpoint,
            model=spec.model,
            inputs=len(spec.inputs) or None,
            request_bytes=len(payload),
            call=spec.call,
            agent=spec.agent,
            parent=spec.parent,
            agent_depth=spec.agent_depth,
            truncated_tokens=spec.truncated_tokens,
        )
        if spec.media:
            count_media(rec, spec)
        url = self._urls[endpoint or 0]
        return rec, HttpRequest(url, payload, headers)

    async def send(self, spec: RequestSpec, step: int, scheduled_ns: int | None = None) -> Record:
        router = self.router
        endpoint = None if router is None else router.pick(spec.session)
        rec, req = self.build(spec, step, endpoint)
        rec.scheduled_ns = scheduled_ns
        check = self.output_check
        keep = spec.keep_text or (check is not None and check.needs_text)
        text: list[str] | None = [] if keep else None
        calls = ToolCalls() if check is not None and check.needs_calls else None
        t = self._timeouts
        rec.start_ns = rec.sent_ns = sent = now_ns()
        total_deadline = sent + t.total_ns
        # workload.cancel after_s: the deadlines' timer also ends the stream at that point
        stop = NEVER if spec.cancel_after_ns is None else sent + spec.cancel_after_ns
        earliest = 0  # the earliest the answer's last byte may have come
        try:
            async with asyncio.timeout_at(
                loop_time_at(min(sent + t.first_token_ns, total_deadline, stop))
            ) as tmo:
                after = spec.cancel_after_tokens  # workload.cancel after_tokens: token events
                end = min(total_deadline, stop)
                earliest = await self._stream(rec, req, tmo, end, text, calls, after or NEVER)
        except TimeoutError:
            if now_ns() >= stop:
                cut_by_client(rec)  # the user stopped: the connection was closed on the way out
            elif now_ns() >= total_deadline:
                fail(rec, "total_timeout", "no complete response within timeouts_s.total")
            elif rec.first_token_ns is None:
                fail(rec, "first_token_timeout", "no token within timeouts_s.first_token")
            else:
                fail(rec, "idle_timeout", "no data within timeouts_s.idle")
        except TransportError as exc:
            fail(rec, exc.kind, exc.detail)
        except EventTooLarge as exc:
            fail(rec, "event_too_large", str(exc))
        except asyncio.CancelledError:
            fail(rec, "cancelled", "the run was interrupted")
            rec.end_ns = now_ns()
            keep_text(rec, text if spec.keep_text else None)
            self.cancelled.append(rec)
            raise
        except Exception as exc:  # a bug of ours must not end the run: keep it as a row
            fail(rec, "client_error", f"{type(exc).__name__}: {exc}")
        finally:
            if router is not None and endpoint is not None:  # ended, whatever the outcome
                router.release(endpoint)
        rec.end_ns = now_ns()
        if earliest and rec.ok and self._exact:
            rec.end_ns = min(earliest, rec.end_ns)  # its last byte: the kernel's stamp
        elif earliest and rec.end_ns > earliest:
            rec.end_slack_ns = rec.end_ns - earliest
        if check is not None and rec.ok:  # after the stream: out of every timing
            rec.valid_output, rec.invalid_detail = check.check(calls, "".join(text or ()))
        keep_text(rec, text if spec.keep_text else None)
        if spec.keep_text and calls is not None and calls.args:
            keep_tool_call(rec, calls)
        return rec

    async def _stream(
        self,
        rec: Record,
        req: HttpRequest,
        tmo: asyncio.Timeout,
        total_deadline: int,
        text: list[str] | None,
        calls: ToolCalls | None = None,
        stop: int = NEVER,
    ) -> int:
        """Read the answer onto ``rec``; returns the earliest its last read's bytes may
        have come (0: no body read)."""
        idle = self._timeouts.idle_ns
        idle_slack = idle // 8
        armed = 0  # the idle deadline the timer is set to, once tokens flow
        async with self.transport.open(req) as resp:
            rec.headers_ns = now_ns()
            phases(rec, resp)
            if resp.reconnects:  # the kept-alive connection was dropped: timed from the retry
                rec.reconnects = resp.reconnects
                if resp.retry_start_ns is not None:
                    rec.start_ns = resp.retry_start_ns
            rec.sent_ns = resp.sent_ns or rec.start_ns
            rec.http_status = resp.status
            if resp.status >= 300:  # redirects are not followed: a 3xx is the answer
                body = await resp.read_prefix(200)
                fail(rec, f"http_{resp.status}", body.decode("utf-8", "replace"))
                return 0
            exact = self._exact
            if not self._stream_mode:
                limit = self._limits.body_bytes
                return await read_whole_body(
                    rec, resp, self._adapter, limit, self._pooling, text, calls, exact
                )
            splitter = SseSplitter(self._limits.event_bytes)
            max_events = self._limits.max_tokens(rec.max_tokens)
            adapter = self._adapter
            arrived = earliest = 0
            async for arrived, data, late in resp.chunks():
                payloads = splitter.feed(data)
                used = apply_events(
                    rec,
                    adapter,
                    payloads,
                    arrived,
                    text,
                    splitter.errors,
                    calls,
                    stop,
                    late,
                    exact and not splitter.holding,
                )
                earliest = arrived if exact or not late else arrived - late
                if used is not None:  # the answer's last event (or a bad one), or the abort
                    if rec.cancelled_by_client:
                        resp.abort()
                    else:
                        resp.end_of_answer(used < len(payloads) or splitter.holding)
                    return earliest
                if rec.output_events > max_events:
                    too_many(rec, max_events)
                    return earliest
                if rec.first_token_ns is not None and arrived + idle > armed:
                    armed = min(arrived + idle + idle_slack, total_deadline)
                    tmo.reschedule(loop_time_at(armed))
            tail = splitter.finish()
            if apply_events(rec, adapter, tail, arrived, text, splitter.errors, calls) is not None:
                return earliest
        fail(rec, "incomplete_stream", "the stream ended without its final event")
        return earliest
