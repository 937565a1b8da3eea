"""One generation in progress: writes its tokens, faults and truth record.

Owns the per-request output side. The engine or pacer calls ``emit()`` once per
token; the plain streaming path writes one pre-framed ``bytes`` object,
stamping ``perf_counter_ns()`` just before the write (a write that wakes the
reader can get this process preempted right after it, which would make a stamp
taken after the write late by the reader's whole turn) and, with ``--truth``,
noting the write's id (``token_w``), by which the truth file later takes the
kernel's stamp of when that write left the socket (``loadgen.mock.txlog``).
Mid-stream and framing faults (disconnect, stall, malformed, error_event,
split, no_done, bom) live in :mod:`loadgen.mock.gen_faults`' ``FaultyStreamGen``
so the common path stays branch-free. ``BodyGen`` answers non-streaming requests with one JSON body.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Protocol, cast

from loadgen.mock.events import SEQ_MASK, Events, variants_of
from loadgen.mock.http_framing import JSON_TYPE, simple_response
from loadgen.mock.metrics import Metrics
from loadgen.mock.request import GenSpec
from loadgen.mock.truth import TruthWriter
from loadgen.mock.txlog import TxSource

__all__ = ["BodyGen", "Conn", "Ctx", "Gen", "StreamGen"]

_pc = time.perf_counter_ns


class Conn(Protocol):
    """What a generation needs from its connection."""

    transport: asyncio.Transport
    keep_alive: bool

    def response_done(self) -> None: ...


@dataclass(slots=True)
class Ctx:
    """Server-wide state shared by all generations."""

    loop: asyncio.AbstractEventLoop
    metrics: Metrics
    truth: TruthWriter | None
    seq: bytes
    stall_s: float


class Gen:
    """Base: bookkeeping, completion, truth record."""

    __slots__ = (
        "accepted",
        "admit_ns",
        "admitted",
        "blocks",
        "cached",
        "conn",
        "ctx",
        "dead",
        "draft_tokens",
        "drafts",
        "emitted",
        "events",
        "fault",
        "finish",
        "first_ns",
        "gone",
        "kv",
        "n_out",
        "offset",
        "path",
        "recv_ns",
        "rid",
        "sched_ns",
        "spec",
        "token_ns",
        "token_w",
        "tx",
    )  # fmt: skip

    def __init__(
        self, ctx: Ctx, conn: Conn, spec: GenSpec, events: Events, *, rid: str | None,
        path: str, recv_ns: int, n_out: int, finish: str, offset: int, fault: str | None,
    ):  # fmt: skip
        self.ctx = ctx
        self.conn = conn
        self.spec = spec
        self.events = events
        self.rid = rid
        self.path = path
        self.recv_ns = recv_ns
        self.sched_ns = recv_ns  # when generation may start (slow_first_byte moves it)
        self.n_out = n_out
        self.finish = finish
        self.offset = offset
        self.fault = fault
        self.emitted = 0
        self.kv = 0
        self.first_ns = 0
        self.dead = False
        self.gone = False  # the client went away before the end (truth: aborted)
        self.token_ns: list[int] = []
        #: with --truth, a transport that numbers its writes: each token's write id
        self.tx: TxSource | None = None
        if ctx.truth is not None and isinstance(getattr(conn.transport, "writes", None), int):
            self.tx = cast(TxSource, conn.transport)
        self.token_w: list[int] = []
        self.blocks: list[int] | None = None  # prefix-cache block hashes (engine mode)
        self.cached = 0  # prompt tokens its first admission found in the prefix cache
        self.admitted = False
        self.drafts = self.draft_tokens = self.accepted = 0  # --spec-decode, its truth
        self.admit_ns = 0  # first scheduled by the batch engine (0: at sched_ns)

    def emit(self) -> bool:
        """Produce the next token; True when the request is over."""
        raise NotImplementedError

    def cache_hit(self, tokens: int, created: int) -> None:
        """The engine admitted it with ``tokens`` of its prompt cached and ``created`` more
        (its other full blocks) now cached. The first admission's counts are the
        request's (vLLM's ``num_cached_tokens``, ``num_cache_creation_tokens``; a
        preempted request's re-admission does not change them); its usage reports them."""
        if not self.admitted:
            self.admitted = True
            self.cached = self.events.cached_tokens = tokens
            self.events.created_tokens = created

    def emit_n(self, m: int) -> bool:
        """Produce up to ``m`` tokens now (a late scheduler catching up)."""
        return any(self.emit() for _ in range(m))

    def emit_group(self, m: int) -> bool:
        """A speculative step's ``m`` tokens (the target's and the accepted drafts'), as
        one event where the stream's format allows (here: token by token)."""
        return self.emit_n(m)

    def spec_step(self, drafted: int, accepted: int) -> None:
        """This step drafted ``drafted`` tokens for the request, ``accepted`` of them kept."""
        if drafted:
            self.drafts += 1
            self.draft_tokens += drafted
            self.accepted += accepted

    def emit_all(self) -> None:
        """Burst mode: produce every remaining token now."""
        self.emit_n(self.n_out)

    def abort(self) -> None:
        """The client went away: stop, count it, record it."""
        if not self.dead:
            self.dead = self.gone = True
            self._record(200, "abort", _pc())

    def _variant(self, k: int) -> int:
        return self.ctx.seq[(self.offset + k) & SEQ_MASK]

    def _wrote(self, now: int, n: int = 1) -> None:
        """``n`` tokens went out in the write just made, stamped ``now`` before it."""
        if n == 1:
            self.token_ns.append(now)
        else:
            self.token_ns.extend([now] * n)
        if self.tx is not None:
            self.token_w.extend([self.tx.writes - 1] * n)

    def _first(self, now: int) -> None:
        self.first_ns = now
        self.ctx.metrics.first_token(self.recv_ns, now, self.spec.prompt_tokens)

    def _record(self, status: int, reason: str, end_ns: int) -> None:
        self.ctx.metrics.finished(self.recv_ns, end_ns, self.emitted, reason)
        if self.ctx.truth is not None:
            record: dict[str, Any] = {
                "request_id": self.rid,
                "path": self.path,
                "recv_ns": self.recv_ns,
                "token_ns": self.token_ns,
                "prompt_tokens": self.spec.prompt_tokens,
                "cached_tokens": self.cached,
                "output_tokens": self.emitted,
                "reasoning_tokens": min(self.emitted, self.events.n_reason),
                "status": status,
                "fault": self.fault,
                "end_ns": end_ns,
            }
            if self.spec.context_tokens:  # Responses: of prompt_tokens, the stored conversation's
                record["context_tokens"] = self.spec.context_tokens
            if self.gone:  # the client went away before the answer's end
                record["aborted"] = True
            if self.drafts:  # --spec-decode: this request's share of the draft counters
                record["spec_decode"] = [self.drafts, self.draft_tokens, self.accepted]
            self.ctx.truth.add(record, self.tx, self.token_w)

    def _complete(self) -> None:
        self.dead = True
        end = _pc()
        if self.first_ns:
            self.ctx.metrics.phases(
                self.recv_ns, self.admit_ns or self.sched_ns, self.first_ns, end
            )
        self._record(200, self.finish, end)
        self.conn.response_done()


class StreamGen(Gen):
    """Streaming response without faults: the hot path."""

    __slots__ = ("fast_from", "frames", "n_reason", "opening", "write")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.write = self.conn.transport.write
        self.frames = self.events.frames
        self.opening = self.events.first()
        self.n_reason = self.events.n_reason
        self.fast_from = max(1, self.n_reason)  # from here on emit() takes a ready frame

    def _token(self, k: int) -> bytes:
        v = self.ctx.seq[(self.offset + k) & SEQ_MASK]
        if k < self.n_reason:
            data = self.events.reasoning(k, v)
        else:
            data = self.frames[v] if self.frames is not None else self.events.token(k, v)
        return self.opening + data if k == 0 else data

    def _ending(self, k: int, done: bool = True) -> bytes:
        variants = b""
        if self.events.needs_text:
            variants = variants_of(self.ctx.seq, self.offset, k + 1)
        last = self.events.last(k, self._variant(k), self.finish, variants)
        return (self.opening if k == 0 else b"") + last + self.events.trailer(k + 1, done)

    def emit(self) -> bool:
        if self.dead:
            return True
        k = self.emitted
        if k + 1 >= self.n_out:
            return self.emit_n(1)
        frames = self.frames
        data = (
            frames[self.ctx.seq[(self.offset + k) & SEQ_MASK]]
            if frames is not None and k >= self.fast_from
            else None
        )
        if data is None:
            data = self._token(k)
        now = _pc()  # before the write: waking the reader may preempt us right after it
        self.write(data)
        self.emitted = k + 1
        self.token_ns.append(now)
        if self.tx is not None:
            self.token_w.append(self.tx.writes - 1)
        if k == 0:
            self._first(now)
        return False

    def emit_n(self, m: int) -> bool:
        """Write the next ``m`` tokens (fewer if the response ends) in one write."""
        if self.dead:
            return True
        k0 = self.emitted
        k1 = min(k0 + m, self.n_out)
        last = k1 == self.n_out
        parts = [self._token(k) for k in range(k0, k1 - 1 if last else k1)]
        if last:
            parts.append(self._ending(k1 - 1))
        data = b"".join(parts)
        now = _pc()
        self.write(data)
        self._wrote(now, k1 - k0)
        self.emitted = k1
        if k0 == 0:
            self._first(now)
        if last:
            self._complete()
        return last

    def emit_group(self, m: int) -> bool:
        """The next ``m`` tokens as one event (vLLM's speculative step: one delta holding
        every token the step emitted), for chat and completions answer tokens; other
        formats and reasoning tokens get one event per token, in one write."""
        if self.dead:
            return True
        k0 = self.emitted
        k1 = min(k0 + m, self.n_out)
        last = k1 == self.n_out
        variants = variants_of(self.ctx.seq, self.offset + k0, k1 - k0)
        data = None
        if k0 > 0 and k0 >= self.n_reason:
            data = self.events.merged(k1 - 1, variants, self.finish if last else None)
        if data is None:
            return self.emit_n(m)
        if last:
            data += self.events.trailer(k1, True)
        now = _pc()
        self.write(data)
        self._wrote(now, k1 - k0)
        self.emitted = k1
        if last:
            self._complete()
        return last


class BodyGen(Gen):
    """Non-streaming response: tokens are timed, the body goes out at the end."""

    __slots__ = ()

    def emit(self) -> bool:
        if self.dead:
            return True
        k = self.emitted
        self.emitted = k + 1
        if k == 0:
            self._first(_pc())
        if k + 1 < self.n_out:
            return False
        variants = variants_of(self.ctx.seq, self.offset, self.n_out)
        body = self.events.body(variants, self.finish)
        self.conn.transport.write(
            simple_response(200, body, keep_alive=self.conn.keep_alive, content_type=JSON_TYPE)
        )
        self._complete()
        return True
