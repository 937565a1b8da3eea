"""Every value of a scenario is one the request encoder and the outputs can carry.

YAML builds values JSON has no word for: ``!!binary`` (bytes), ``!!set``, a
timestamp (``2024-01-01``), an integer of any size, ``.nan`` and ``.inf``, a
mapping keyed by numbers or by ``true`` (``on:``), text with a lone surrogate
(``"\\ud800"``). The typed fields refuse most of them, but ``target.extra_body``
takes any value and is encoded into every request, so such a value used to fail
at the first send, mid-run, as a traceback. :func:`check_values` (called by
:func:`~loadgen.scenario.load.parse_scenario` once the scenario validates)
walks the whole document and refuses, in one line naming the field:

- a value of a kind JSON has not (only text, integers, finite numbers,
  true/false, null, lists and mappings with text keys);
- an integer outside 64 bits (orjson's range, -2**63 to 2**64-1);
- text that is not valid Unicode (a lone surrogate cannot be UTF-8);

and then encodes ``target.extra_body`` as the client will (``orjson.dumps``),
at most :data:`~loadgen.scenario.limits.MAX_BODY_BYTES` of it.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from loadgen.errors import ScenarioError
from loadgen.scenario.limits import MAX_BODY_BYTES

__all__ = ["check_values"]

#: a field path: keys and list indexes from the top of the document
Where = tuple[str | int, ...]

#: what JSON carries, said after "expected"
_JSON = "a JSON value (text, a number, true/false, null, a list or a mapping)"
#: orjson's integer range
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def check_values(raw: dict[str, Any], source_of: Callable[[Where], str]) -> None:
    """Refuse (ScenarioError, one line) the first value of ``raw`` JSON cannot carry.

    ``raw``: the document as read, overrides applied. ``source_of``: who set the
    field at a path (the file, or a command-line flag).
    """
    for where, why in _problems(raw, ()):
        raise ScenarioError(f"{source_of(where)}: {_path(where)}: {why}")
    target = raw.get("target")
    extra = target.get("extra_body") if isinstance(target, dict) else None
    if isinstance(extra, dict) and extra:
        where = ("target", "extra_body")
        try:
            size = len(orjson.dumps(extra))
        except (TypeError, orjson.JSONEncodeError) as exc:  # what the walk missed
            raise ScenarioError(f"{source_of(where)}: target.extra_body: {exc}") from None
        if size > MAX_BODY_BYTES:
            raise ScenarioError(
                f"{source_of(where)}: target.extra_body: {size} bytes as JSON; every request "
                f"carries it: expected at most {MAX_BODY_BYTES}"
            )


def _problems(value: Any, where: Where) -> Iterator[tuple[Where, str]]:
    """(path, what is wrong) for each value under ``value`` that JSON cannot carry."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield (
                    (*where, str(key)),
                    (
                        f"the key {_shown(key)} is {_kind(key)}, not text; expected text keys "
                        "(quote it)"
                    ),
                )
                return
            if (why := _text_problem(key)) is not None:
                yield (*where, key.encode("utf-8", "replace").decode()), f"the key {why}"
                return
            yield from _problems(item, (*where, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _problems(item, (*where, i))
    elif (why := _scalar_problem(value)) is not None:
        yield where, why


def _scalar_problem(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return _text_problem(value)
    if isinstance(value, int):
        if _INT_MIN <= value <= _INT_MAX:
            return None
        return (
            f"an integer of {len(str(abs(value)))} digits; expected one from -2**63 to "
            "2**64-1 (what a JSON encoder carries)"
        )
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return f"{value} is no number JSON can carry; expected a finite number"
    if isinstance(value, bytes):
        return f"binary data (YAML !!binary); expected {_JSON}"
    if isinstance(value, set | frozenset):
        return "a set (YAML !!set); expected a list"
    if isinstance(value, datetime.date):  # datetime too
        return (
            f"YAML reads {value.isoformat()} as {_kind(value)}; expected text "
            f"(quote it: '{value.isoformat()}')"
        )
    return f"{_kind(value)}; expected {_JSON}"


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        return (
            f"holds a lone surrogate (\\u{code:04x}) at character {exc.start}, which no "
            "UTF-8 text can carry; expected valid Unicode text"
        )
    return None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, datetime.datetime):
        return "a timestamp"
    if isinstance(value, datetime.date):
        return "a date"
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def _shown(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _path(where: Where) -> str:
    """``target.extra_body.stop[2]``; a key that is not a plain name as ``['a b']``."""
    out = ""
    for part in where:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{_shown(part)}]"
    return out or "(top level)"


#: a key shown as it is in a field path
_NAME = re.compile(r"[A-Za-z0-9_@$+-]{1,60}")
