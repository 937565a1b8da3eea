"""Reading each trace format's rows; :mod:`loadgen.workload.traces` sorts and selects them.

Owns telling an ``auto`` trace's format apart (:func:`detect`), the JSON lines
readers (``mooncake``, ``loadgen``) and the CSV readers (``azure``,
``burstgpt``) with their cells: token counts, seconds, date-times read to
the nanosecond. Each reader gives raw rows, :data:`Raw`, in file order; what
each format holds is in the docstring of :mod:`loadgen.workload.traces`.

Bad input raises a one-line :class:`ScenarioError` naming the file, the line
(1-based; a CSV header is line 1), the field and what was expected.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from collections.abc import Iterator
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from loadgen.errors import ScenarioError
from loadgen.workload.trace_agents import Link

__all__ = ["NS", "Raw", "detect", "fail", "read_rows"]

#: nanoseconds in a second
NS = 1_000_000_000
_AZURE = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_BURSTGPT = ("Timestamp", "Request tokens", "Response tokens")
_BURSTGPT_SESSION = ("Session ID", "SessionID")
_HEAD = 1 << 16  # bytes an auto trace's format is told from (OTLP: its resourceSpans key)
_SECONDS = re.compile(r"(\d+)(?:\.(\d*))?")
_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?"
)

#: One parsed row before sorting: (time ns, input tokens, output tokens, hash ids, session,
#: link: an agent trace's call, where it waits and in which agent; None elsewhere).
Raw = tuple[int, int, int, tuple[int, ...], str | None, Link | None]


def read_rows(name: str, fh: IO[bytes], fmt: str, skipped: Counter[str]) -> list[Raw]:
    """The rows of ``fh`` in format ``fmt`` (not ``auto``), in file order.

    Rows the format marks as not requests are counted in ``skipped`` by reason.
    """
    if fmt in ("mooncake", "loadgen"):
        return _read_jsonl(name, fh, fmt, skipped)
    return _read_csv(name, fh, fmt, skipped)


def fail(where: str, what: str) -> NoReturn:
    """Raise the one-line error ``where: what`` (``where`` is the file, or file:line)."""
    raise ScenarioError(f"{where}: {what}")


def detect(name: str, fh: IO[bytes]) -> str:
    """The format of an ``auto`` trace, from its extension and first non-blank line."""
    n, line = 1, fh.readline()
    while line and not line.strip():
        n, line = n + 1, fh.readline()
    first = line.removeprefix(b"\xef\xbb\xbf").strip()
    fh.seek(0)
    head = fh.read(_HEAD)
    fh.seek(0)
    if not first:
        fail(name, "the trace is empty")
    suffix = Path(name).suffix.lower()
    where = f"{name}:{n}"
    if suffix in (".jsonl", ".json", ".ndjson") or (suffix != ".csv" and first[:1] == b"{"):
        if first[:1] == b"{" and b'"resourceSpans"' in head:  # one document, maybe indented
            return "otlp"
        obj = _json_object(where, first)
        if "hash_ids" in obj or "input_length" in obj:
            return "mooncake"
        if "prompt_tokens_requested" in obj:
            return "loadgen"
        fail(
            where,
            "cannot tell the trace format: expected a key input_length (mooncake), "
            "prompt_tokens_requested (loadgen) or resourceSpans (otlp); "
            f"got keys {', '.join(map(str, obj))}; "
            "set load.trace_format",
        )
    header = [c.strip() for c in next(csv.reader([_utf8(where, first)]), [])]
    if "TIMESTAMP" in header and "ContextTokens" in header:
        return "azure"
    if "Request tokens" in header:
        return "burstgpt"
    return fail(
        where,
        "cannot tell the trace format from the header: expected columns "
        f"{', '.join(_AZURE)} (azure) or {', '.join(_BURSTGPT)} (burstgpt); "
        f"got {', '.join(header)}",
    )


def _utf8(where: str, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return fail(
            where, f"expected UTF-8 text, got byte {raw[exc.start]:#04x} at column {exc.start + 1}"
        )


def _json_object(where: str, line: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        text = _utf8(where, line)
        fail(where, f"expected a JSON object, got invalid JSON {text[:60]!r}")
    if not isinstance(obj, dict):
        fail(where, f"expected a JSON object, got {type(obj).__name__} {obj!r:.60}")
    return obj


# ----------------------------------------------------------------- JSON lines


def _read_jsonl(name: str, fh: IO[bytes], fmt: str, skipped: Counter[str]) -> list[Raw]:
    parse = _mooncake_row if fmt == "mooncake" else _loadgen_row
    out: list[Raw] = []
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


def _mooncake_row(where: str, obj: dict[str, Any]) -> Raw:
    ms = _get(where, obj, "timestamp", "mooncake", "timestamp, input_length, output_length")
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not ms >= 0 or ms == math.inf:
        fail(where, f"timestamp: expected non-negative milliseconds, got {ms!r}")
    t = ms * 1_000_000 if isinstance(ms, int) else round(ms * 1e6)
    inp = _count(where, "input_length", obj.get("input_length", _MISSING))
    out = _count(where, "output_length", obj.get("output_length", _MISSING))
    ids = obj.get("hash_ids")
    ids = () if ids is None else ids
    if not isinstance(ids, list | tuple) or not all(type(i) is int for i in ids):
        fail(where, f"hash_ids: expected a list of integers, got {ids!r:.60}")
    session = obj.get("session_id")
    return t, inp, out, tuple(ids), None if session is None else str(session), None


def _loadgen_row(where: str, obj: dict[str, Any]) -> Raw | None:
    if obj.get("warmup") is True:
        return None
    t = obj.get("scheduled_ns")
    key = "scheduled_ns"
    if t is None:
        key = "start_ns"
        t = _get(where, obj, key, "loadgen", "scheduled_ns or start_ns")
    if isinstance(t, bool) or not isinstance(t, int):
        fail(where, f"{key}: expected integer nanoseconds, got {t!r}")
    key = "prompt_tokens_requested"
    if obj.get(key) is None:
        key = "prompt_tokens_server"
    inp = _count(where, key, obj.get(key, _MISSING))
    out = _count(where, "max_tokens", obj.get("max_tokens", _MISSING))
    session = obj.get("session")
    return t, inp, out, (), None if session is None else str(session), None


_MISSING = object()


def _get(where: str, obj: dict[str, Any], key: str, fmt: str, keys: str) -> Any:
    if key not in obj:
        fail(where, f"{key}: missing; the {fmt} format expects keys {keys}")
    return obj[key]


def _count(where: str, key: str, value: object) -> int:
    """A token count from JSON: a non-negative integer (12.0 is read as 12)."""
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer():
        return int(value)
    if value is _MISSING:
        fail(where, f"{key}: missing; expected a non-negative integer")
    return fail(where, f"{key}: expected a non-negative integer, got {value!r}")


# ----------------------------------------------------------------------- CSV


def _text_lines(name: str, fh: IO[bytes]) -> Iterator[str]:
    for n, raw in enumerate(fh, 1):
        yield _utf8(f"{name}:{n}", raw.removeprefix(b"\xef\xbb\xbf") if n == 1 else raw)


def _read_csv(name: str, fh: IO[bytes], fmt: str, skipped: Counter[str]) -> list[Raw]:
    reader = csv.reader(_text_lines(name, fh))
    try:
        header = [c.strip() for c in next(reader, [])]
        need = _AZURE if fmt == "azure" else _BURSTGPT
        if not all(c in header for c in need):
            got = ", ".join(header) if header else "nothing"
            fail(f"{name}:1", f"expected columns {', '.join(need)} ({fmt} format); got {got}")
        cols = [header.index(c) for c in need]
        cols += [header.index(c) for c in _BURSTGPT_SESSION if c in header][:1]
        to_ns = _datetime_ns if fmt == "azure" else _seconds_ns
        out: list[Raw] = []
        for fields in reader:
            where = f"{name}:{reader.line_num}"
            if not any(f.strip() for f in fields):
                continue
            if len(fields) <= max(cols):
                fail(where, f"expected {len(header)} fields as in the header, got {len(fields)}")
            ts, inp, gen, *session = (fields[i].strip() for i in cols)
            row = (to_ns(where, ts), _int_text(where, need[1], inp), _int_text(where, need[2], gen))
            if fmt == "burstgpt" and row[2] == 0:
                skipped["failed"] += 1
            else:
                out.append((*row, (), (session[0] or None) if session else None, None))
        return out
    except csv.Error as exc:
        return fail(f"{name}:{reader.line_num}", f"CSV syntax error: {exc}")


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
        fail(where, f"{column}: expected a non-negative integer, got {text!r}")
    return value


def _seconds_ns(where: str, text: str) -> int:
    """Seconds as written (``5``, ``12.25``, ``1e-06``) to integer nanoseconds."""
    m = _SECONDS.fullmatch(text)
    if m:
        return int(m[1]) * NS + int((m[2] or "")[:9].ljust(9, "0"))
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 <= value < math.inf):
        fail(where, f"Timestamp: expected non-negative seconds, got {text!r}")
    return round(value * NS)


def _datetime_ns(where: str, text: str) -> int:
    """``2023-11-16 18:15:46.6805900`` or ``...+00:00`` to ns since 0001-01-01 (UTC)."""
    m = _DATETIME.fullmatch(text)
    day = None
    if m is not None and int(m[4]) < 24 and int(m[5]) < 60 and int(m[6]) < 61:
        day = _day(text[:10])
    if m is None or day is None:
        return fail(
            where, f"TIMESTAMP: expected a date-time like 2023-11-16 18:15:46.6805900, got {text!r}"
        )
    secs = day * 86400 + int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])
    zone = m[8]
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        secs -= sign * (int(zone[1:3]) * 3600 + int(zone[-2:]) * 60)
    return secs * NS + int((m[7] or "").ljust(9, "0"))


@lru_cache(maxsize=1024)
def _day(text: str) -> int | None:
    """Days from 0001-01-01 to ``YYYY-MM-DD``; None for a date that does not exist."""
    try:
        return date.fromisoformat(text).toordinal()
    except ValueError:
        return None
