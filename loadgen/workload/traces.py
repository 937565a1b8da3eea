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
- ``auto``: ``.csv`` (or a first line not starting with ``{``) is told apart by its
  header, JSON lines by the keys of the first object.

Token counts of 0 are raised to 1, since a request needs a prompt and at least one
output token, and counted in ``Trace.clamped`` (except BurstGPT's failures, above).
Offsets count from the earliest row that is kept; rows are sorted by time, stably.

Bad input raises a one-line :class:`ScenarioError` naming the file, the line
(1-based; a CSV header is line 1), the field and what was expected.

Imports: numpy, orjson, loadgen.errors, loadgen.scenario.loadspec.
"""

from __future__ import annotations

import csv
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from loadgen.errors import ScenarioError
from loadgen.scenario.loadspec import TRACE_FORMATS

__all__ = [
    "TRACE_FORMATS",
    "Trace",
    "TraceRow",
    "load_trace",
    "read_trace",
    "rescale",
]


_NS = 1_000_000_000
_AZURE = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_BURSTGPT = ("Timestamp", "Request tokens", "Response tokens")
_BURSTGPT_SESSION = ("Session ID", "SessionID")
_SECONDS = re.compile(r"(\d+)(?:\.(\d*))?")
_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?"
)

# One parsed row before sorting: (time ns, input tokens, output tokens, hash ids, session).
_Raw = tuple[int, int, int, tuple[int, ...], str | None]


@dataclass(slots=True, frozen=True)
class TraceRow:
    """One request of a trace."""

    offset_ns: int  # arrival after the first kept row, after time_scale and window
    input_tokens: int
    output_tokens: int
    hash_ids: tuple[int, ...] = ()  # Mooncake: ids of 512-token blocks shared between requests
    session: str | None = None  # where a format has a conversation/session id


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
            fmt = _detect(name, fh)
        if fmt in ("mooncake", "loadgen"):
            raw = _read_jsonl(name, fh, fmt, skipped)
        else:
            raw = _read_csv(name, fh, fmt, skipped)
    raw = _clamp(raw, clamped)
    rows = _select(name, raw, window_s, limit, skipped)
    return Trace(rescale(rows, time_scale), fmt, dict(skipped), dict(clamped))


def rescale(rows: Sequence[TraceRow], time_scale: float) -> list[TraceRow]:
    """``rows`` with every offset multiplied by ``time_scale`` (rounded to the ns)."""
    if time_scale == 1.0:
        return list(rows)
    return [
        TraceRow(
            round(r.offset_ns * time_scale), r.input_tokens, r.output_tokens, r.hash_ids, r.session
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


def _fail(where: str, what: str) -> NoReturn:
    raise ScenarioError(f"{where}: {what}")


def _detect(name: str, fh: IO[bytes]) -> str:
    """The format of an ``auto`` trace, from its extension and first non-blank line."""
    n, line = 1, fh.readline()
    while line and not line.strip():
        n, line = n + 1, fh.readline()
    first = line.removeprefix(b"\xef\xbb\xbf").strip()
    fh.seek(0)
    if not first:
        _fail(name, "the trace is empty")
    suffix = Path(name).suffix.lower()
    where = f"{name}:{n}"
    if suffix in (".jsonl", ".json", ".ndjson") or (suffix != ".csv" and first[:1] == b"{"):
        obj = _json_object(where, first)
        if "hash_ids" in obj or "input_length" in obj:
            return "mooncake"
        if "prompt_tokens_requested" in obj:
            return "loadgen"
        _fail(
            where,
            "cannot tell the trace format: expected a key input_length (mooncake) or "
            f"prompt_tokens_requested (loadgen); got keys {', '.join(map(str, obj))}; "
            "set load.trace_format",
        )
    header = [c.strip() for c in next(csv.reader([_utf8(where, first)]), [])]
    if "TIMESTAMP" in header and "ContextTokens" in header:
        return "azure"
    if "Request tokens" in header:
        return "burstgpt"
    return _fail(
        where,
        "cannot tell the trace format from the header: expected columns "
        f"{', '.join(_AZURE)} (azure) or {', '.join(_BURSTGPT)} (burstgpt); "
        f"got {', '.join(header)}",
    )


def _utf8(where: str, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _fail(
            where, f"expected UTF-8 text, got byte {raw[exc.start]:#04x} at column {exc.start + 1}"
        )


def _json_object(where: str, line: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        text = _utf8(where, line)
        _fail(where, f"expected a JSON object, got invalid JSON {text[:60]!r}")
    if not isinstance(obj, dict):
        _fail(where, f"expected a JSON object, got {type(obj).__name__} {obj!r:.60}")
    return obj


# ----------------------------------------------------------------- JSON lines


def _read_jsonl(name: str, fh: IO[bytes], fmt: str, skipped: Counter[str]) -> list[_Raw]:
    parse = _mooncake_row if fmt == "mooncake" else _loadgen_row
    out: list[_Raw] = []
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        where = f"{name}:{n}"
        if fmt == "loadgen" and not line.endswith(b"\n"):
            try:  # the last line of a killed run may be cut short
                orjson.loads(line)
            except orjson.JSONDecodeError:
                skipped["torn_line"] += 1
                continue
        obj = _json_object(where, line)
        row = parse(where, obj)
        if row is None:
            skipped["warmup"] += 1
        else:
            out.append(row)
    return out


def _mooncake_row(where: str, obj: dict[str, Any]) -> _Raw:
    ms = _get(where, obj, "timestamp", "mooncake", "timestamp, input_length, output_length")
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not ms >= 0 or ms == math.inf:
        _fail(where, f"timestamp: expected non-negative milliseconds, got {ms!r}")
    t = ms * 1_000_000 if isinstance(ms, int) else round(ms * 1e6)
    inp = _count(where, "input_length", obj.get("input_length", _MISSING))
    out = _count(where, "output_length", obj.get("output_length", _MISSING))
    ids = obj.get("hash_ids")
    ids = () if ids is None else ids
    if not isinstance(ids, list | tuple) or not all(type(i) is int for i in ids):
        _fail(where, f"hash_ids: expected a list of integers, got {ids!r:.60}")
    session = obj.get("session_id")
    return t, inp, out, tuple(ids), None if session is None else str(session)


def _loadgen_row(where: str, obj: dict[str, Any]) -> _Raw | None:
    if obj.get("warmup") is True:
        return None
    t = obj.get("scheduled_ns")
    key = "scheduled_ns"
    if t is None:
        key = "start_ns"
        t = _get(where, obj, key, "loadgen", "scheduled_ns or start_ns")
    if isinstance(t, bool) or not isinstance(t, int):
        _fail(where, f"{key}: expected integer nanoseconds, got {t!r}")
    key = "prompt_tokens_requested"
    if obj.get(key) is None:
        key = "prompt_tokens_server"
    inp = _count(where, key, obj.get(key, _MISSING))
    out = _count(where, "max_tokens", obj.get("max_tokens", _MISSING))
    session = obj.get("session")
    return t, inp, out, (), None if session is None else str(session)


_MISSING = object()


def _get(where: str, obj: dict[str, Any], key: str, fmt: str, keys: str) -> Any:
    if key not in obj:
        _fail(where, f"{key}: missing; the {fmt} format expects keys {keys}")
    return obj[key]


def _count(where: str, key: str, value: object) -> int:
    """A token count from JSON: a non-negative integer (12.0 is read as 12)."""
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer():
        return int(value)
    if value is _MISSING:
        _fail(where, f"{key}: missing; expected a non-negative integer")
    return _fail(where, f"{key}: expected a non-negative integer, got {value!r}")


# ----------------------------------------------------------------------- CSV


def _text_lines(name: str, fh: IO[bytes]) -> Iterator[str]:
    for n, raw in enumerate(fh, 1):
        yield _utf8(f"{name}:{n}", raw.removeprefix(b"\xef\xbb\xbf") if n == 1 else raw)


def _read_csv(name: str, fh: IO[bytes], fmt: str, skipped: Counter[str]) -> list[_Raw]:
    reader = csv.reader(_text_lines(name, fh))
    try:
        header = [c.strip() for c in next(reader, [])]
        need = _AZURE if fmt == "azure" else _BURSTGPT
        if not all(c in header for c in need):
            got = ", ".join(header) if header else "nothing"
            _fail(f"{name}:1", f"expected columns {', '.join(need)} ({fmt} format); got {got}")
        cols = [header.index(c) for c in need]
        cols += [header.index(c) for c in _BURSTGPT_SESSION if c in header][:1]
        to_ns = _datetime_ns if fmt == "azure" else _seconds_ns
        out: list[_Raw] = []
        for fields in reader:
            where = f"{name}:{reader.line_num}"
            if not any(f.strip() for f in fields):
                continue
            if len(fields) <= max(cols):
                _fail(where, f"expected {len(header)} fields as in the header, got {len(fields)}")
            ts, inp, gen, *session = (fields[i].strip() for i in cols)
            row = (to_ns(where, ts), _int_text(where, need[1], inp), _int_text(where, need[2], gen))
            if fmt == "burstgpt" and row[2] == 0:
                skipped["failed"] += 1
            else:
                out.append((*row, (), (session[0] or None) if session else None))
        return out
    except csv.Error as exc:
        return _fail(f"{name}:{reader.line_num}", f"CSV syntax error: {exc}")


def _int_text(where: str, column: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = -1.0
        value = int(f) if f >= 0 and f.is_integer() else -1
    if value < 0:
        _fail(where, f"{column}: expected a non-negative integer, got {text!r}")
    return value


def _seconds_ns(where: str, text: str) -> int:
    """Seconds as written (``5``, ``12.25``, ``1e-06``) to integer nanoseconds."""
    m = _SECONDS.fullmatch(text)
    if m:
        return int(m[1]) * _NS + int((m[2] or "")[:9].ljust(9, "0"))
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 <= value < math.inf):
        _fail(where, f"Timestamp: expected non-negative seconds, got {text!r}")
    return round(value * _NS)


def _datetime_ns(where: str, text: str) -> int:
    """``2023-11-16 18:15:46.6805900`` or ``...+00:00`` to ns since 0001-01-01 (UTC)."""
    m = _DATETIME.fullmatch(text)
    day = None
    if m is not None and int(m[4]) < 24 and int(m[5]) < 60 and int(m[6]) < 61:
        day = _day(text[:10])
    if m is None or day is None:
        return _fail(
            where, f"TIMESTAMP: expected a date-time like 2023-11-16 18:15:46.6805900, got {text!r}"
        )
    secs = day * 86400 + int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])
    zone = m[8]
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        secs -= sign * (int(zone[1:3]) * 3600 + int(zone[-2:]) * 60)
    return secs * _NS + int((m[7] or "").ljust(9, "0"))


@lru_cache(maxsize=1024)
def _day(text: str) -> int | None:
    """Days from 0001-01-01 to ``YYYY-MM-DD``; None for a date that does not exist."""
    try:
        return date.fromisoformat(text).toordinal()
    except ValueError:
        return None


# ---------------------------------------------------------- sort and select


def _clamp(raw: list[_Raw], clamped: Counter[str]) -> list[_Raw]:
    for i, (t, inp, gen, ids, session) in enumerate(raw):
        if inp == 0 or gen == 0:
            clamped.update(k for k, v in (("input_tokens", inp), ("output_tokens", gen)) if v == 0)
            raw[i] = (t, max(inp, 1), max(gen, 1), ids, session)
    return raw


def _select(
    name: str,
    raw: list[_Raw],
    window_s: tuple[float, float] | None,
    limit: int | None,
    skipped: Counter[str],
) -> list[TraceRow]:
    if not raw:
        left = f" ({', '.join(f'{v} {k}' for k, v in skipped.items())} left out)" if skipped else ""
        _fail(name, f"no requests in the trace{left}")
    time: Callable[[_Raw], int] = itemgetter(0)
    if any(raw[i][0] > raw[i + 1][0] for i in range(len(raw) - 1)):
        raw.sort(key=time)
    t0 = raw[0][0]
    if window_s is not None:
        start, end = window_s
        lo = bisect_left(raw, t0 + round(start * _NS), key=time)
        hi = len(raw) if end == math.inf else bisect_left(raw, t0 + round(end * _NS), key=time)
        if lo == hi:
            span = (raw[-1][0] - t0) / _NS
            _fail(
                name,
                f"no requests in window_s [{start:g}, {end:g}) s; "
                f"the trace spans 0 to {span:.3f} s",
            )
        raw = raw[lo:hi]
    if limit is not None:
        raw = raw[:limit]
    base = raw[0][0]
    return [TraceRow(t - base, inp, gen, ids, s) for t, inp, gen, ids, s in raw]


# ------------------------------------------------------------------ summaries
