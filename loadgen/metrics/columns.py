"""A step's finished requests, kept compact: what the step summary needs, and no more.

A :class:`~loadgen.records.Record` holds its token stamps as a list of Python
ints (2-5 KB for a 128-token request). Once a record is on disk
(records.jsonl) the run keeps only this: per measured request one row of
integer columns (``array('q')``: 8 bytes a value), and the inter-token gaps
of the successful ones pooled in one array (4 bytes a gap while every gap
fits in an int32, about 2.1 s; the array turns int64 the first time one does
not). For 128-token requests that is about 0.76 KB a request.

Columns hold ``None`` as :data:`NONE` (the smallest int64). Row order is the
order the records were added, so every statistic the summary takes over
them sees its values in the same order a list of records would give:
:func:`loadgen.metrics.summarize_step` over a :class:`StepColumns` and over
the records it was built from are identical (a metric of more than 2**24
values aside: loadgen.metrics.bigstats).

Failures are tallied by kind (:class:`ErrorTally`), with the first detail of
each kind kept as the example: the terminal's error lines need no more.

:meth:`StepColumns.merge` appends another accumulator's rows after this
one's (per-worker accumulators merged by a parent; an accumulator pickles).
The mean and std of merged rows follow the merge order, as they would the
order of a concatenated record list.

A request the client aborted on purpose (``Record.cancelled_by_client``,
``workload.cancel``) is measured (its send and end are in the window) but
neither ok nor failed: it is counted (``by_client``) with the output tokens
it received (``by_client_tokens``), and is in no latency column.

Request phases: whether each successful request opened its connection is one
byte a row; the new connections' connect and TLS times are kept apart (a
kept-alive run has about one per stream).

loadgen's own error: per successful request, how much earlier than their stamps
its first, first answer and last token events and its end may have come (four
columns), and, for the few gaps whose tokens shared a read with a later event,
how much shorter (``lo``) or longer (``hi``) each gap may have been, kept
sparse by the gap's index in the pool (a quiet client has none).

Tool calls and structured answers are tallied apart (``outputs``:
:class:`~loadgen.metrics.validity.OutputTally`), and so is every call of a
session (``sessions``: :class:`~loadgen.metrics.session_tally.SessionTally`).
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterable
from itertools import islice
from typing import Self

import numpy as np
import numpy.typing as npt

from loadgen.metrics.session_tally import SessionTally
from loadgen.metrics.validity import OutputTally
from loadgen.records import Record

__all__ = ["NONE", "ErrorTally", "StepColumns"]

#: how a column holds None
NONE = -(2**63)

Ints = npt.NDArray[np.int64]

#: per measured request (warm-up, ramp and cancelled left out)
_MEASURED = ("start", "sent", "end", "ok")
#: per successful measured request
_OK = (
    "start",
    "sent",
    "end",
    "scheduled",  # None in closed loop
    "first",  # first token of any kind
    "first_answer",
    "first_reasoning",
    "last",
    "stamps",  # len(token_ns): token events with a stamp
    "output_tokens",  # Record.output_tokens (the server's count, else events)
    "output_events",
    "output_server",  # None when the server sent no count
    "prompt_tokens",  # Record.prompt_tokens
    "prompt_requested",
    "prompt_server",
    "reasoning_tokens",
    "reasoning_events",
    "max_tokens",
    "turn",
    # -- pooling APIs (embeddings, rerank)
    "inputs",  # Record.inputs: inputs or documents sent (None for a generating API)
    # -- inputs beyond text (images, audio)
    "images",
    "image_pixels",
    "audio_us",  # Record.audio_s in microseconds
    "request_bytes",
    # -- the server's prefix cache
    "cached",  # Record.cached_tokens_server (None: the usage had no count)
    "session",  # Record.session (None: not a multi-turn request)
    "call",  # Record.call: an agent's call index (None: not an agent's)
    # -- loadgen's own error (Record.token_slack_ns, end_slack_ns): how much earlier
    "first_slack",  # than its stamp the first token event may have come
    "answer_slack",  # ... the first answer token event
    "last_slack",  # ... the last token event
    "end_slack",  # than end_ns the answer's end may have come
)


def _opt(v: int | None) -> int:
    return NONE if v is None else v


class _Accumulator:
    """Built by adding records one at a time: :meth:`of` adds a whole list."""

    __slots__ = ()

    @classmethod
    def of(cls, records: Iterable[Record]) -> Self:
        acc = cls()
        for r in records:
            acc.add(r)
        return acc

    def add(self, r: Record) -> None:
        raise NotImplementedError


class ErrorTally(_Accumulator):
    """Failed requests by ``error_kind`` (cancelled and kind-less ones left out), in the
    order each kind first appeared, with the first failure's detail as the example."""

    __slots__ = ("counts", "endpoints", "examples", "unmeasured")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.examples: dict[str, str] = {}
        self.endpoints: dict[str, int | None] = {}  # the endpoint each example failed at
        #: of ``counts``, the warm-up and ramp-up requests (not in the step's measured counts)
        self.unmeasured: dict[str, int] = {}

    def add(self, r: Record) -> None:
        kind = r.error_kind
        if r.ok or kind is None or kind == "cancelled":
            return
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if r.warmup or r.ramp:
            self.unmeasured[kind] = self.unmeasured.get(kind, 0) + 1
        if kind not in self.examples:
            self.examples[kind] = r.error_detail or ""
            self.endpoints[kind] = r.endpoint

    def merge(self, other: ErrorTally) -> None:
        for kind, n in other.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
            if (u := other.unmeasured.get(kind)) is not None:
                self.unmeasured[kind] = self.unmeasured.get(kind, 0) + u
            self.examples.setdefault(kind, other.examples[kind])
            self.endpoints.setdefault(kind, other.endpoints.get(kind))


class StepColumns(_Accumulator):
    """One step's records as columns: :meth:`add` each record as it finishes, then
    :func:`loadgen.metrics.summarize_step` takes this in place of the record list."""

    __slots__ = (
        "_conn",
        "_gap_slack",
        "_gaps",
        "_measured",
        "_ok",
        "_setup",
        "by_client",
        "by_client_tokens",
        "cancelled",
        "errors",
        "failures",
        "outputs",
        "ramp",
        "reasoning_ok",
        "reconnects",
        "sessions",
        "total",
        "usage_ignored",
        "vector_dims",
        "warmup",
    )

    def __init__(self) -> None:
        self._measured = {name: array("q") for name in _MEASURED}
        self._ok = {name: array("q") for name in _OK}
        self._gaps = array("i")  # int64 ("q") once a gap does not fit
        #: the gaps that may be off (sparse): their index in ``_gaps``, and how much
        #: shorter (``lo``) or longer (``hi``) each may have been
        self._gap_slack = {"at": array("q"), "lo": array("q"), "hi": array("q")}
        #: request phases, per successful row: 1 a new connection, 0 reused, -1 not known
        self._conn = array("b")
        #: of the new connections, in row order: connect and TLS handshake times, where known
        self._setup = {"connect": array("q"), "tls": array("q")}
        self.total = 0  # records added, cancelled ones included
        self.cancelled = 0
        self.warmup = 0  # warm-up records, cancelled ones left out
        self.ramp = 0  # ramp records that are not also warm-up, cancelled ones left out
        self.reconnects = 0  # over the measured records
        self.reasoning_ok = 0  # successful measured records with a reasoning event
        self.usage_ignored = 0  # measured records whose usage block was not believed
        #: measured failures by kind ("unknown" for one without a kind)
        self.errors: dict[str, int] = {}
        #: every failure of the step (warm-up and ramp too), for the terminal's error lines
        self.failures = ErrorTally()
        #: the successful measured answers' tool calls and validity
        self.outputs = OutputTally()
        #: pooling APIs: the vector dimensions the measured answers carried, with their count
        self.vector_dims: dict[int, int] = {}
        #: every call of a session (warm-up, ramp-up and failed ones too)
        self.sessions = SessionTally()
        # -- users who stop (workload.cancel): measured, neither ok nor failed
        self.by_client = 0  # measured records the client aborted on purpose
        self.by_client_tokens = 0  # the output tokens they received before the abort

    def add(self, r: Record) -> None:
        """Take what the summary needs from ``r``; ``r`` itself is not kept."""
        self.total += 1
        self.failures.add(r)
        if r.session is not None:
            unmeasured = r.warmup or r.ramp or r.error_kind == "cancelled"
            measured_ok = r.ok and not (unmeasured or r.cancelled_by_client)  # an ok row below
            self.sessions.add(r, self.ok_count if measured_ok else None)
        if r.error_kind == "cancelled":
            self.cancelled += 1
            return
        if r.warmup or r.ramp:
            if r.warmup:
                self.warmup += 1
            else:
                self.ramp += 1
            return
        m = self._measured
        m["start"].append(r.start_ns)
        m["sent"].append(r.sent_ns)
        m["end"].append(r.end_ns)
        m["ok"].append(1 if r.ok else 0)
        self.reconnects += r.reconnects
        if r.usage_ignored is not None:
            self.usage_ignored += 1
        if r.vector_dim is not None:
            self.vector_dims[r.vector_dim] = self.vector_dims.get(r.vector_dim, 0) + 1
        if r.cancelled_by_client:  # a user who stopped: in the window, out of the latencies
            self.by_client += 1
            self.by_client_tokens += r.output_tokens
            return
        if not r.ok:
            kind = r.error_kind or "unknown"
            self.errors[kind] = self.errors.get(kind, 0) + 1
            return
        self._add_ok(r)

    def _add_ok(self, r: Record) -> None:
        c = self._ok
        c["start"].append(r.start_ns)
        c["sent"].append(r.sent_ns)
        c["end"].append(r.end_ns)
        c["scheduled"].append(_opt(r.scheduled_ns))
        c["first"].append(_opt(r.first_token_ns))
        c["first_answer"].append(_opt(r.first_answer_ns))
        c["first_reasoning"].append(_opt(r.first_reasoning_ns))
        c["last"].append(_opt(r.last_token_ns))
        c["stamps"].append(len(r.token_ns))
        c["output_tokens"].append(r.output_tokens)
        c["output_events"].append(r.output_events)
        c["output_server"].append(_opt(r.output_tokens_server))
        c["prompt_tokens"].append(r.prompt_tokens)
        c["prompt_requested"].append(r.prompt_tokens_requested)
        c["prompt_server"].append(_opt(r.prompt_tokens_server))
        c["reasoning_tokens"].append(r.reasoning_tokens)
        c["reasoning_events"].append(r.reasoning_events)
        c["max_tokens"].append(r.max_tokens)
        c["turn"].append(_opt(r.turn))
        c["inputs"].append(_opt(r.inputs))
        c["images"].append(r.images)
        c["image_pixels"].append(r.image_pixels)
        c["audio_us"].append(round(r.audio_s * 1e6))
        c["request_bytes"].append(r.request_bytes)
        c["cached"].append(_opt(r.cached_tokens_server))
        c["session"].append(_opt(r.session))
        c["call"].append(_opt(r.call))
        slack = r.token_slack_ns
        if slack:  # off the common path: only tokens that shared a read have any
            t = r.token_ns
            c["first_slack"].append(slack[0])
            answer = t.index(r.first_answer_ns) if r.first_answer_ns in t else len(t)
            c["answer_slack"].append(slack[answer] if answer < len(slack) else 0)
            c["last_slack"].append(slack[-1] if len(slack) == len(t) else 0)
            if len(t) > 1:
                self._add_gap_slack(slack, len(t))
        else:
            c["first_slack"].append(0)
            c["answer_slack"].append(0)
            c["last_slack"].append(0)
        c["end_slack"].append(r.end_slack_ns)
        new = r.new_connection
        self._conn.append(-1 if new is None else int(new))
        if new:  # off the common path: a kept-alive run opens one per stream
            if r.connect_start_ns is not None and r.connect_ns is not None:
                self._setup["connect"].append(r.connect_ns - r.connect_start_ns)
            if r.connect_ns is not None and r.tls_ns is not None:
                self._setup["tls"].append(r.tls_ns - r.connect_ns)
        if r.reasoning_events:
            self.reasoning_ok += 1
        self.outputs.add(r)
        if len(r.token_ns) > 1:
            self._add_gaps(r.token_ns)

    def _add_gap_slack(self, slack: list[int], n: int) -> None:
        """The gaps of the request about to be pooled (``n`` token events) that may be
        off: gap i (t[i] - t[i-1]) up to slack[i] shorter and slack[i-1] longer."""
        base = len(self._gaps) - 1  # gap i of the request is pooled at base + i
        at, lo, hi = self._gap_slack["at"], self._gap_slack["lo"], self._gap_slack["hi"]
        known = len(slack)  # the slack of the events past these is 0
        for i in range(1, min(n, known + 1)):
            shorter = slack[i] if i < known else 0
            longer = slack[i - 1]
            if shorter or longer:
                at.append(base + i)
                lo.append(shorter)
                hi.append(longer)

    def _add_gaps(self, t: list[int]) -> None:
        """ITL gaps t[i] - t[i-1], appended in order; int32 until one does not fit."""
        g = self._gaps
        n = len(g)
        try:
            g.extend(map(operator.sub, islice(t, 1, None), t))
        except OverflowError:
            del g[n:]
            self._gaps = array("q", g)
            self._gaps.extend(map(operator.sub, islice(t, 1, None), t))

    def merge(self, other: StepColumns) -> None:
        """Append ``other``'s requests after this one's (as if added after them)."""
        self.sessions.merge(other.sessions, self.ok_count)
        for name, col in other._measured.items():
            self._measured[name].extend(col)
        for name, col in other._ok.items():
            self._ok[name].extend(col)
        offset = len(self._gaps)
        self._gap_slack["at"].extend(i + offset for i in other._gap_slack["at"])
        self._gap_slack["lo"].extend(other._gap_slack["lo"])
        self._gap_slack["hi"].extend(other._gap_slack["hi"])
        if self._gaps.typecode != other._gaps.typecode:
            if self._gaps.typecode == "i":
                self._gaps = array("q", self._gaps)
            self._gaps.extend(array("q", other._gaps))
        else:
            self._gaps.extend(other._gaps)
        self._conn.extend(other._conn)
        for name, col in other._setup.items():
            self._setup[name].extend(col)
        self.total += other.total
        self.cancelled += other.cancelled
        self.warmup += other.warmup
        self.ramp += other.ramp
        self.reconnects += other.reconnects
        self.reasoning_ok += other.reasoning_ok
        self.usage_ignored += other.usage_ignored
        self.by_client += other.by_client
        self.by_client_tokens += other.by_client_tokens
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n
        self.failures.merge(other.failures)
        self.outputs.merge(other.outputs)
        for dim, n in other.vector_dims.items():
            self.vector_dims[dim] = self.vector_dims.get(dim, 0) + n

    @property
    def measured_count(self) -> int:
        return len(self._measured["sent"])

    @property
    def ok_count(self) -> int:
        return len(self._ok["sent"])

    # The three readers below return views of the arrays themselves (no copy): an
    # accumulator refuses to grow (BufferError) while one of its views lives.

    def measured(self, name: str) -> Ints:
        """A measured request's column (``start``, ``sent``, ``end``, ``ok``), as int64."""
        return np.frombuffer(self._measured[name], dtype=np.int64)

    def ok(self, name: str) -> Ints:
        """A successful request's column as int64 (None as :data:`NONE`)."""
        return np.frombuffer(self._ok[name], dtype=np.int64)

    def connections(self) -> npt.NDArray[np.int8]:
        """Per successful request: 1 it opened its connection, 0 reused one, -1 not known."""
        return np.frombuffer(self._conn, dtype=np.int8)

    def setup(self, name: str) -> Ints:
        """The new connections' ``connect`` (connect_ns - connect_start_ns) or ``tls``
        (tls_ns - connect_ns) times, where the transport stamped them."""
        return np.frombuffer(self._setup[name], dtype=np.int64)

    def gaps(self) -> npt.NDArray[np.int32] | Ints:
        """The pooled ITL gaps of the successful requests, in order."""
        if self._gaps.typecode == "i":
            return np.frombuffer(self._gaps, dtype=np.int32)
        return np.frombuffer(self._gaps, dtype=np.int64)

    def gap_slack(self) -> tuple[Ints, Ints, Ints]:
        """The pooled gaps that may be off: their index among :meth:`gaps`, and how much
        shorter and longer each may have been (ns)."""
        g = self._gap_slack
        at, lo, hi = (np.frombuffer(g[k], dtype=np.int64) for k in ("at", "lo", "hi"))
        return at, lo, hi

    def span(self) -> tuple[int, int]:
        """(first measured send, last measured end); (0, 0) when nothing was measured."""
        if not self.measured_count:
            return 0, 0
        return min(self._measured["sent"]), max(self._measured["end"])
