"""Request-arrival traces: a file in, rows of (arrival offset, input tokens, output tokens) out.

Pure: no clock, no network. Formats (``fmt``):

- ``mooncake``: JSONL, one object a line, as in ``kvcache-ai/Mooncake``
  ``FAST25-release/traces``: ``timestamp`` (ms since the first request),
  ``input_length``, ``output_length``, ``hash_ids`` (ids of the prompt's
  512-token blocks; the same id in two requests is a shared prefix block).
  ``session_id``, an extension some replay tools write, becomes ``session``.
- ``azure``: the Azure LLM inference traces 2023/2024 (``Azure/AzurePublicDataset``),
  CSV ``TIMESTAMP,ContextTokens,GeneratedTokens``. ``TIMESTAMP`` is a date-time,
  ``2023-11-16 18:15:46.6805900`` (2023: 7 fractional digits, no zone) or
  ``2024-05-12 00:00:00.001163+00:00`` (2024: 0 or 6 digits and an offset);
  it is read to the nanosecond, without a zone taken as UTC.
- ``burstgpt``: BurstGPT (``HPMLL/BurstGPT``), CSV ``Timestamp,Model,Request tokens,
  Response tokens,Total tokens,Log Type``; ``Timestamp`` is seconds from 0:00 of the
  trace's first day. Columns are found by name, so later layouts that add
  ``Session ID`` and ``Elapsed time`` read too (``Session ID`` becomes ``session``).
  A row with ``Response tokens`` 0 is a failed request in BurstGPT: it is left out
  and counted in ``Trace.skipped["failed"]``.
- ``loadgen``: loadgen's own ``records.jsonl``. The arrival is ``scheduled_ns`` (open
  loop) or else ``start_ns``; input tokens ``prompt_tokens_requested``, or else
  ``prompt_tokens_server``; output tokens ``max_tokens``. Warm-up rows are left out
  (``skipped["warmup"]``), and so is a torn last line of a killed run
  (``skipped["torn_line"]``). Every step of the run is kept; ``window_s`` picks one.
- ``otlp``: OpenTelemetry GenAI spans as OTLP JSON (:mod:`loadgen.workload.trace_otlp`):
  an agent trace. Each LLM call is a row; its session is the trace, and its
  :class:`~loadgen.workload.trace_agents.Link` says which call it waits for, how
  long after that call's end it started (``gap_ns``), its agent and depth.
- ``auto``: ``.csv`` (or a first line not starting with ``{``) is told apart by its
  header, JSON lines by the keys of the first object, OTLP by its ``resourceSpans``.

Token counts of 0 are raised to 1, since a request needs a prompt and at least one
output token, and counted in ``Trace.clamped`` (except BurstGPT's failures, above).
Offsets count from the earliest row that is kept; rows are sorted by time, stably.

Bad input raises a one-line :class:`ScenarioError` naming the file, the line
(1-based; a CSV header is line 1), the field and what was expected.

The formats are read in :mod:`loadgen.workload.trace_formats`; this module checks
the options, then clamps, sorts, windows and rescales the rows.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from loadgen.errors import ScenarioError
from loadgen.scenario import TRACE_FORMATS
from loadgen.workload.trace_agents import Link
from loadgen.workload.trace_formats import NS, Raw, detect, fail, read_rows
from loadgen.workload.trace_otlp import read_otlp

__all__ = [
    "TRACE_FORMATS",
    "Trace",
    "TraceRow",
    "load_trace",
    "read_trace",
    "rescale",
]


@dataclass(slots=True, frozen=True)
class TraceRow:
    """One request of a trace."""

    offset_ns: int  # arrival after the first kept row, after time_scale and window
    input_tokens: int
    output_tokens: int
    hash_ids: tuple[int, ...] = ()  # Mooncake: ids of 512-token blocks shared between requests
    session: str | None = None  # where a format has a conversation/session id
    # -- agent traces: the call this one waits for, its agent and place (None elsewhere)
    link: Link | None = None


@dataclass(slots=True, frozen=True)
class Trace:
    """The rows of a trace and what reading it left out or changed."""

    rows: list[TraceRow]
    fmt: str  # the format read (never "auto")
    skipped: dict[str, int]  # reason (failed, warmup, torn_line) -> rows left out
    clamped: dict[str, int]  # field (input_tokens, output_tokens) -> zeros raised to 1


def read_trace(
    path: str | Path,
    fmt: str = "auto",
    *,
    time_scale: float = 1.0,
    window_s: tuple[float, float] | None = None,
    limit: int | None = None,
) -> list[TraceRow]:
    """The rows of :func:`load_trace`."""
    return load_trace(path, fmt, time_scale=time_scale, window_s=window_s, limit=limit).rows


def load_trace(
    path: str | Path,
    fmt: str = "auto",
    *,
    time_scale: float = 1.0,
    window_s: tuple[float, float] | None = None,
    limit: int | None = None,
) -> Trace:
    """Read a trace file.

    ``window_s=(start, end)`` keeps the rows whose offset from the trace's earliest
    row is in ``[start, end)`` seconds, before any scaling; offsets then count from
    the first kept row. ``limit`` keeps the first ``limit`` of those. Last,
    ``time_scale`` multiplies every gap between arrivals: 2.0 replays the trace
    twice as slowly (half the request rate), 0.5 twice as fast.
    """
    name = str(path)
    _check_options(time_scale, window_s, limit)
    if fmt not in TRACE_FORMATS:
        raise ScenarioError(
            f"trace_format: expected one of {', '.join(TRACE_FORMATS)}; got {fmt!r}"
        )
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        raise ScenarioError(f"{name}: no such trace file") from None
    except OSError as exc:
        raise ScenarioError(f"{name}: cannot read the trace: {exc.strerror or exc}") from None
    skipped: Counter[str] = Counter()
    clamped: Counter[str] = Counter()
    with fh:
        if fmt == "auto":
            fmt = detect(name, fh)
        raw = read_otlp(name, fh, skipped) if fmt == "otlp" else read_rows(name, fh, fmt, skipped)
    raw = _clamp(raw, clamped)
    rows = _select(name, raw, window_s, limit, skipped)
    return Trace(rescale(rows, time_scale), fmt, dict(skipped), dict(clamped))


def rescale(rows: Sequence[TraceRow], time_scale: float) -> list[TraceRow]:
    """``rows`` with every offset multiplied by ``time_scale`` (rounded to the ns)."""
    if time_scale == 1.0:
        return list(rows)
    return [
        TraceRow(
            round(r.offset_ns * time_scale),
            r.input_tokens,
            r.output_tokens,
            r.hash_ids,
            r.session,
            r.link,
        )
        for r in rows
    ]


def _check_options(
    time_scale: float, window_s: tuple[float, float] | None, limit: int | None
) -> None:
    if not (isinstance(time_scale, int | float) and math.isfinite(time_scale) and time_scale > 0):
        raise ScenarioError(f"time_scale: expected a positive number, got {time_scale!r}")
    if window_s is not None:
        start, end = window_s
        if not (0 <= start < end):
            raise ScenarioError(
                f"window_s: expected [start, end) with 0 <= start < end, got {list(window_s)}"
            )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ScenarioError(f"limit: expected a positive integer, got {limit!r}")


# ---------------------------------------------------------- sort and select


def _clamp(raw: list[Raw], clamped: Counter[str]) -> list[Raw]:
    for i, (t, inp, gen, ids, session, link) in enumerate(raw):
        if inp == 0 or gen == 0:
            clamped.update(k for k, v in (("input_tokens", inp), ("output_tokens", gen)) if v == 0)
            raw[i] = (t, max(inp, 1), max(gen, 1), ids, session, link)
    return raw


def _select(
    name: str,
    raw: list[Raw],
    window_s: tuple[float, float] | None,
    limit: int | None,
    skipped: Counter[str],
) -> list[TraceRow]:
    if not raw:
        left = f" ({', '.join(f'{v} {k}' for k, v in skipped.items())} left out)" if skipped else ""
        fail(name, f"no requests in the trace{left}")
    time: Callable[[Raw], int] = itemgetter(0)
    if any(raw[i][0] > raw[i + 1][0] for i in range(len(raw) - 1)):
        raw.sort(key=time)
    t0 = raw[0][0]
    if window_s is not None:
        start, end = window_s
        lo = bisect_left(raw, t0 + round(start * NS), key=time)
        hi = len(raw) if end == math.inf else bisect_left(raw, t0 + round(end * NS), key=time)
        if lo == hi:
            span = (raw[-1][0] - t0) / NS
            fail(
                name,
                f"no requests in window_s [{start:g}, {end:g}) s; "
                f"the trace spans 0 to {span:.3f} s",
            )
        raw = raw[lo:hi]
    if limit is not None:
        raw = raw[:limit]
    base = raw[0][0]
    return [TraceRow(t - base, inp, gen, ids, s, link) for t, inp, gen, ids, s, link in raw]
