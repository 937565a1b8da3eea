"""One row per request, and the writer that streams rows to ``records.jsonl``.

Rows are slotted dataclasses on the hot path and serialised with orjson as
each request finishes, so an interrupted run keeps everything measured. All
times are integer nanoseconds of :func:`loadgen.clock.now_ns`.

A write the disk refuses (full, read-only, gone) becomes one
:class:`~loadgen.errors.OutputError` naming the file; the writer then takes
nothing more.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import IO

import orjson

from loadgen.errors import OutputError

__all__ = ["ERROR_KINDS", "DamagedRecords", "Record", "RecordWriter", "read_records"]

#: Every value ``Record.error_kind`` can take (``http_<status>`` stands for one per status).
ERROR_KINDS = (
    "http_<status>",
    "connect_error",
    "connect_timeout",
    "disconnected",
    "protocol_error",
    "first_token_timeout",
    "idle_timeout",
    "total_timeout",
    "incomplete_stream",
    "malformed_event",
    "event_too_large",
    "headers_too_large",
    "too_many_tokens",
    "stream_error",
    "cancelled",
    "client_error",
    # -- pooling APIs (embeddings, rerank)
    "wrong_vector_count",
    "vector_dim_mismatch",
)


@dataclass(slots=True)
class Record:
    """What happened to one request. ``ok`` is True only for a complete, clean stream."""

    step: int
    id: int
    warmup: bool
    request_id: str
    prompt_tokens_requested: int
    max_tokens: int
    ramp: bool = False  # started during load.ramp_up_s: recorded, left out of every metric
    session: int | None = None  # multi-turn: the session this request belongs to
    turn: int | None = None  # multi-turn: 0-based turn within the session
    scheduled_ns: int | None = None  # open loop: when the schedule said to send
    start_ns: int = 0  # loadgen began the request (before the HTTP library ran)
    sent_ns: int = 0  # the request's last byte went to the socket (= start_ns if unknown)
    headers_ns: int | None = None
    first_token_ns: int | None = None  # first token event of any kind (reasoning or answer)
    first_answer_ns: int | None = None  # first token event carrying answer output, not reasoning
    first_reasoning_ns: int | None = None  # first token event carrying reasoning
    last_token_ns: int | None = None
    end_ns: int = 0
    token_ns: list[int] = field(default_factory=list)  # arrival of every token event
    output_events: int = 0  # client-side count of token events (reasoning ones included)
    reasoning_events: int = 0  # of output_events, those that carried reasoning
    output_tokens_server: int | None = None  # usage.completion_tokens
    prompt_tokens_server: int | None = None  # usage.prompt_tokens
    reasoning_tokens_server: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    output_chars: int = 0  # characters of answer output (reasoning text is not counted)
    finish_reason: str | None = None
    ok: bool = False
    error_kind: str | None = None
    error_detail: str | None = None
    http_status: int | None = None
    reconnects: int = 0  # sent again on a fresh connection: the kept-alive one was dropped
    answer_text: str | None = None  # the answer output, kept only when the spec asked (keep_text)
    endpoint: int | None = None  # several endpoints: index of the one it went to (target.urls)
    #: the server's usage block (TGI: ``details``) could not be believed (a count that is a
    #: string, say): why. It was ignored; the output is counted from the stream's events
    usage_ignored: str | None = None
    # -- model mixes (target.models)
    model: str | None = None  # the model the request named, when the scenario has a mix
    # -- tool calls and structured output
    first_tool_ns: int | None = None  # arrival of the first tool-call fragment
    tool_calls: int = 0  # tool calls in the answer (fragments that carried a function name)
    tool_events: int = 0  # tool-call fragments (each also a token event)
    #: the answer's tool calls / structured text against their schemas (after the stream):
    #: None when there was nothing to check (no tools or response format, a failed request,
    #: an answer without a call under tool_choice auto)
    valid_output: bool | None = None
    invalid_detail: str | None = None  # why it was invalid: the first problem found
    # -- Responses and Messages APIs
    #: the server's id of the answer (Responses: the next turn's previous_response_id)
    response_id: str | None = None
    # -- pooling APIs (embeddings, rerank)
    inputs: int | None = None  # embeddings: inputs sent; rerank: documents sent (else None)
    vector_dim: int | None = None  # embeddings: the answer's vector dimension
    # -- inputs beyond text (images, audio)
    images: int = 0  # images the request carried
    image_pixels: int = 0  # their pixels, summed (width x height)
    audio_s: float = 0.0  # seconds of audio it carried
    request_bytes: int = 0  # the request body's size in bytes (as sent, before any TLS)
    # -- agents (workload.agent, agent traces): a session is one agent task
    call: int | None = None  # 0-based index of this LLM call in its agent's loop
    agent: int | None = None  # which agent of the task: 0 the main one, 1.. its sub-agents
    parent: int | None = None  # a sub-agent's call: the id of the call that started it
    agent_depth: int | None = None  # 0 the main agent, 1 a sub-agent, 2 a sub-agent's ...
    truncated_tokens: int = 0  # context dropped to stay within max_context_tokens
    # -- the server's prefix cache
    #: prompt tokens the server served from its cache (usage prompt_tokens_details
    #: .cached_tokens, Messages cache_read_input_tokens); None: not reported
    cached_tokens_server: int | None = None
    # -- users who stop (workload.cancel)
    cancelled_by_client: bool = False  # aborted mid-stream on purpose (not an error)
    # -- agents: the answer's first tool call, kept (with keep_text) for the next call's context
    answer_tool_name: str | None = None  # its function name
    answer_tool_arguments: str | None = None  # its arguments' JSON text, as streamed
    # -- request phases (the transport's stamps; None where it cannot see them)
    #: the request was the first on its connection (None: the transport could not tell)
    new_connection: bool | None = None
    connect_start_ns: int | None = None  # a new connection: the transport began connecting
    connect_ns: int | None = None  # a new connection: its TCP connect was done
    tls_ns: int | None = None  # a new https connection: its TLS handshake was done
    first_byte_ns: int | None = None  # the answer's first byte came (a 1xx answer's included)
    # -- loadgen's own error (docs/metrics.md, "Client error")
    #: per token event, how much earlier than its stamp it may have come (ns): its read
    #: also carried a later token event (or bytes of a later event), so it got that read's
    #: stamp, and came after the connection's previous read. Shorter than ``token_ns``:
    #: the rest are 0. None: every token event's stamp is exact (its read's own)
    token_slack_ns: list[int] | None = None
    #: how much earlier than ``end_ns`` the answer's last byte may have come: ``end_ns``
    #: less the stamp of the read that ended it, plus that read's slack, where the
    #: transport stamps in user space (0: exact, the kernel's stamp of that read, or a
    #: failure: it ends when loadgen saw it)
    end_slack_ns: int = 0

    @property
    def output_tokens(self) -> int:
        """The server's count when it sent one, else the number of token events."""
        s = self.output_tokens_server
        return s if s is not None else self.output_events

    @property
    def reasoning_tokens(self) -> int:
        """The server's reasoning count when it sent one, else the number of reasoning events."""
        s = self.reasoning_tokens_server
        return s if s is not None else self.reasoning_events

    @property
    def prompt_tokens(self) -> int:
        """The server's prompt count when it sent one, else the requested length."""
        s = self.prompt_tokens_server
        return s if s is not None else self.prompt_tokens_requested

    @property
    def count_mismatch(self) -> bool:
        """The server's usage count disagrees with the number of token events."""
        s = self.output_tokens_server
        return s is not None and s != self.output_events


_FIELDS = tuple(f.name for f in fields(Record))


class RecordWriter:
    """Appends records to a JSONL file.

    A write flushes when ``flush_every`` rows are waiting or the rows waiting
    span ``flush_after_ns`` of their requests' ``end_ns`` (no clock is read; the
    caller flushes a quiet tail, see :attr:`pending`).
    """

    def __init__(
        self, path: Path, *, flush_every: int = 64, flush_after_ns: int = 100_000_000
    ) -> None:
        self.path = path
        self._fh: IO[bytes] = path.open("ab")
        self._flush_every = flush_every
        self._flush_after_ns = flush_after_ns
        self._unflushed = 0
        self._oldest_ns = 0  # end_ns of the oldest unflushed row
        #: bytes handed to the file (from its size at opening), and where each row
        #: since the last flush ends: a refused write counts the rows on disk from them
        self._size = self._fh.tell()
        self._ends: list[int] = []
        self.count = 0
        #: the first write the disk refused; every later write or flush raises it again
        self.failure: OutputError | None = None

    @property
    def pending(self) -> bool:
        """Rows are written but not yet flushed."""
        return self._unflushed > 0 and self.failure is None

    def write(self, record: Record) -> None:
        if self.failure is not None:
            raise self.failure
        row = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self._size += len(row)
        self._ends.append(self._size)
        try:
            self._fh.write(row)
        except OSError as exc:
            raise self._failed(exc) from None
        self.count += 1
        t = record.end_ns
        if self._unflushed == 0:
            self._oldest_ns = t
        self._unflushed += 1
        if self._unflushed >= self._flush_every or t - self._oldest_ns >= self._flush_after_ns:
            self.flush()

    def flush(self) -> None:
        if self.failure is not None:
            raise self.failure
        try:
            self._fh.flush()
        except OSError as exc:
            raise self._failed(exc) from None
        self._unflushed = 0
        self._ends.clear()

    def close(self) -> None:
        """Flush and close; after a refused write, close without another try."""
        if self._fh.closed:
            return
        if self.failure is None:
            self.flush()
        with contextlib.suppress(OSError):  # the buffer the disk refused is dropped
            self._fh.close()

    def _failed(self, exc: OSError) -> OutputError:
        # The file's buffer writes whole rows on its own between flushes: what is on
        # disk is its size, not the last flush (rows cut by the refused write are torn).
        try:
            on_disk = os.fstat(self._fh.fileno()).st_size
        except OSError:
            on_disk = 0
        kept = self.count - self._unflushed + sum(end <= on_disk for end in self._ends)
        self.failure = OutputError(
            f"{self.path}: cannot write: {exc.strerror or exc} "
            f"(about {kept} record(s) before it were written)"
        )
        return self.failure


class DamagedRecords(UserWarning):
    """:func:`read_records` skipped rows: torn, not JSON, or of the wrong shape.

    Warned once per file, after its last row; ``loadgen report`` and
    ``compare`` say it in one line on stderr.
    """

    def __init__(self, path: Path, skipped: int) -> None:
        super().__init__(
            f"{path}: skipped {skipped} damaged row(s) (torn, not JSON, or of the wrong shape)"
        )
        self.path = path
        self.skipped = skipped


def _is_int(v: object) -> bool:
    return type(v) is int


def _anything(v: object) -> bool:
    return True


def _is_int_list(v: object) -> bool:
    return type(v) is list and all(type(x) is int for x in v)


#: what a value of each annotation of Record must be (exact types: a bool is no int)
_KINDS: dict[str, Callable[[object], bool]] = {
    "int": _is_int,
    "bool": lambda v: type(v) is bool,
    "str": lambda v: type(v) is str,
    "float": lambda v: type(v) in (int, float),
    "list[int]": _is_int_list,
}


def _checker(annotation: str) -> Callable[[object], bool]:
    base, optional = annotation.removesuffix(" | None"), annotation.endswith(" | None")
    kind = _KINDS.get(base, _anything)  # a new field type: add its check to _KINDS
    return (lambda v: v is None or kind(v)) if optional else kind


_CHECKS = {f.name: _checker(str(f.type)) for f in fields(Record)}
_REQUIRED = frozenset(
    f.name for f in fields(Record) if f.default is MISSING and f.default_factory is MISSING
)


def _record(row: object) -> Record | None:
    """The Record a parsed row holds, or None when it is not one."""
    if not isinstance(row, dict) or not row.keys() >= _REQUIRED:
        return None
    values = {k: row[k] for k in _FIELDS if k in row}
    if not all(_CHECKS[k](v) for k, v in values.items()):
        return None
    return Record(**values)


def read_records(path: Path) -> Iterator[Record]:
    """Records back from a JSONL file.

    A torn line (a killed run), a line that is not JSON, and a row of the wrong
    shape (not an object, a required key missing, a value of the wrong type) are
    skipped and counted: one :class:`DamagedRecords` warning after the last row.
    Keys the file lacks (a file from an older loadgen) take their defaults; keys
    this version does not know are ignored.
    """
    skipped = 0
    with path.open("rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                record = _record(orjson.loads(line))
            except orjson.JSONDecodeError:
                record = None
            if record is None:
                skipped += 1
                continue
            yield record
    if skipped:
        warnings.warn(DamagedRecords(path, skipped), stacklevel=2)
