"""Prompts from a local dataset file: reading, filtering and seeded sampling.

Two layouts, told apart by content (or by ``DatasetSpec.format``):

- JSONL, one object a line: ``{"prompt": "..."}`` or ``{"messages": [{"role",
  "content"}, ...]}``, with an optional ``output_tokens`` (int) and an optional
  reference ``answer``. A final assistant message in ``messages`` is the
  answer and is not sent. Other keys (of a row or a message) are ignored. A JSON array of such
  objects is read the same way.
- ShareGPT: a JSON array (or JSONL) of ``{"conversations": [{"from":
  "human"|"gpt"|"system", "value": "..."}]}``. The prompt is the first human
  turn (``sharegpt_turns: first``) or every turn up to the last human turn as
  chat messages (``all``); the gpt turn after it is the answer. A conversation
  with no human turn is skipped (real ShareGPT dumps hold some).

Token counts come from the caller's ``count_tokens`` (a tokenizer, or a word
count): they drive the length filters and ``output_tokens: answer``.

Every problem with the file is one :class:`ScenarioError` line naming the
file and line. This module also owns the two readers the lengths module uses
for empirical files: :func:`read_text` and :func:`json_array_items`.

Imports: numpy, loadgen.errors, loadgen.scenario.dists.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario.dists import DatasetSpec

__all__ = [
    "DatasetRow",
    "RowSampler",
    "json_array_items",
    "load_dataset",
    "read_text",
    "sample_rows",
]

_ROLES = ("system", "user", "assistant")
_SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "system": "system",
}
_JSON_WS = " \t\r\n"


@dataclass(slots=True, frozen=True)
class DatasetRow:
    """One usable row, after parsing and filtering.

    ``prompt`` is text or chat messages (``{"role", "content"}``, ending with
    the user's). ``output_tokens`` is the max_tokens this row asks for, as
    ``DatasetSpec.output_tokens`` chose it; None means: draw it from
    ``workload.output_tokens``. ``prompt_tokens`` is ``count_tokens`` of the
    prompt (of each message's content, summed: no chat template). ``line`` is
    where the row starts in the file (1-based).
    """

    prompt: str | list[dict[str, str]]
    answer: str | None
    output_tokens: int | None
    line: int
    prompt_tokens: int
    images: tuple[str, ...] = ()  # the row's image files, as written (relative to the dataset)


@dataclass(slots=True)
class _Parsed:
    prompt: str | list[dict[str, str]]
    answer: str | None
    output_tokens: int | None
    line: int
    images: tuple[str, ...] = ()


# --- reading ------------------------------------------------------------------------------


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path`` (a leading BOM dropped); ``what`` names it in errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        raise ScenarioError(msg) from None


def json_array_items(text: str, source: str) -> list[tuple[int, Any]]:
    """(line, item) for each item of the JSON array ``text``; the line is where the item starts."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if text[pos : pos + 1] != "[":
        raise ScenarioError(f"{source}:{_line_at(text, pos)}: not valid JSON: expected '['")
    pos = _skip_ws(text, pos + 1)
    items: list[tuple[int, Any]] = []
    line, counted = 1, 0
    if text[pos : pos + 1] == "]":
        pos += 1
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                item, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                msg = f"{source}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})"
                raise ScenarioError(msg) from None
            items.append((line, item))
            pos = _skip_ws(text, pos)
            sep = text[pos : pos + 1]
            if sep not in (",", "]"):
                at = _line_at(text, pos)
                msg = f"{source}:{at}: not valid JSON: expected ',' or ']' after an item"
                raise ScenarioError(msg)
            pos = _skip_ws(text, pos + 1)
            if sep == "]":
                break
    if pos < len(text):
        at = _line_at(text, pos)
        raise ScenarioError(f"{source}:{at}: not valid JSON: extra data after the array")
    return items


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _JSON_WS:
        pos += 1
    return pos


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _jsonl_items(text: str, source: str) -> Iterator[tuple[int, Any]]:
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except json.JSONDecodeError as exc:
            msg = f"{source}:{number}: not valid JSON: {exc.msg} (column {exc.colno})"
            raise ScenarioError(msg) from None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


# --- rows ---------------------------------------------------------------------------------


def _jsonl_row(obj: Any, where: str, line: int) -> _Parsed:
    """A ``prompt`` or ``messages`` row."""
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    if ("prompt" in obj) == ("messages" in obj):
        both = ", not both" if "prompt" in obj else ""
        raise ScenarioError(f'{where}: expected "prompt" or "messages"{both}')
    answer = obj.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ScenarioError(f"{where}: answer: expected a string, got {_json_type(answer)}")
    prompt: str | list[dict[str, str]]
    if "prompt" in obj:
        prompt = obj["prompt"]
        if not isinstance(prompt, str) or not prompt:
            raise ScenarioError(f"{where}: prompt: expected a non-empty string")
    else:
        prompt = _messages(obj["messages"], where)
        if prompt[-1]["role"] == "assistant":
            if answer is not None:
                msg = f'{where}: give "answer" or a final assistant message, not both'
                raise ScenarioError(msg)
            answer = prompt.pop()["content"]
        if not prompt or prompt[-1]["role"] != "user":
            msg = f"{where}: messages: expected a user message last (before any final answer)"
            raise ScenarioError(msg)
    return _Parsed(prompt, answer, _output_tokens(obj, where), line, _images(obj, where))


def _images(obj: dict[str, Any], where: str) -> tuple[str, ...]:
    raw = obj.get("images")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
        raise ScenarioError(f"{where}: images: expected a list of image file paths")
    return tuple(raw)


def _messages(raw: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        msg = f'{where}: messages: expected a non-empty list of {{"role", "content"}} objects'
        raise ScenarioError(msg)
    out: list[dict[str, str]] = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or "role" not in m or not isinstance(m.get("content"), str):
            msg = f'{where}: messages[{i}]: expected {{"role": ..., "content": "..."}}'
            raise ScenarioError(msg)
        if m["role"] not in _ROLES:
            got = m["role"]
            msg = f"{where}: messages[{i}].role: expected system, user or assistant, got {got!r}"
            raise ScenarioError(msg)
        out.append({"role": m["role"], "content": m["content"]})
    return out


def _output_tokens(obj: dict[str, Any], where: str) -> int | None:
    value = obj.get("output_tokens")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{where}: output_tokens: expected a positive integer, got {value!r}")
    return value


def _sharegpt_row(obj: Any, where: str, line: int, turns: str) -> _Parsed | None:
    """A conversation; None when it has no human turn with text."""
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    if "conversations" not in obj:
        raise ScenarioError(f'{where}: expected "conversations"')
    raw = obj["conversations"]
    if not isinstance(raw, list):
        msg = f'{where}: conversations: expected a list of {{"from", "value"}} objects'
        raise ScenarioError(msg)
    chat: list[dict[str, str]] = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or not isinstance(t.get("value"), str) or "from" not in t:
            msg = f'{where}: conversations[{i}]: expected {{"from": ..., "value": "..."}}'
            raise ScenarioError(msg)
        role = _SHAREGPT_ROLES.get(t["from"]) if isinstance(t["from"], str) else None
        if role is None:
            got = t["from"]
            msg = f"{where}: conversations[{i}].from: expected human, gpt or system, got {got!r}"
            raise ScenarioError(msg)
        chat.append({"role": role, "content": t["value"]})
    asks = [i for i, m in enumerate(chat) if m["role"] == "user" and m["content"]]
    if not asks:
        return None
    ask = asks[0] if turns == "first" else asks[-1]
    after = chat[ask + 1] if ask + 1 < len(chat) else None
    answer = after["content"] if after is not None and after["role"] == "assistant" else None
    prompt = chat[ask]["content"] if turns == "first" else chat[: ask + 1]
    return _Parsed(prompt, answer, _output_tokens(obj, where), line)


# --- loading ------------------------------------------------------------------------------


def load_dataset(
    spec: DatasetSpec, count_tokens: Callable[[str], int], *, base_dir: Path | None = None
) -> list[DatasetRow]:
    """The rows of ``spec.path`` that pass its filters, in file order, at most ``spec.limit``.

    ``output_tokens`` of each row is resolved here (see :class:`DatasetRow`).
    Reading stops once ``limit`` rows are kept, so a later broken line of a
    JSONL file goes unnoticed then.
    """
    path = Path(spec.path)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    source = str(path)
    text = read_text(path, "dataset")
    if text.lstrip(_JSON_WS).startswith("["):
        items: Iterator[tuple[int, Any]] = iter(json_array_items(text, source))
    else:
        items = _jsonl_items(text, source)
    first = next(items, None)
    if first is None:
        raise ScenarioError(f"{source}: no rows (the file is empty)")
    layout = spec.format
    if layout == "auto":
        obj = first[1]
        layout = "sharegpt" if isinstance(obj, dict) and "conversations" in obj else "jsonl"
    rows: list[DatasetRow] = []
    skipped = {"no human turn": 0, "no output length": 0}
    for line, obj in _chain(first, items):
        where = f"{source}:{line}"
        if layout == "sharegpt":
            parsed = _sharegpt_row(obj, where, line, spec.sharegpt_turns)
            if parsed is None:
                skipped["no human turn"] += 1
                continue
        else:
            parsed = _jsonl_row(obj, where, line)
        row = _measured(parsed, spec, count_tokens)
        if row is None:
            skipped["no output length"] += 1
        elif _passes(row, spec):
            rows.append(row)
            if spec.limit is not None and len(rows) >= spec.limit:
                break
    if not rows:
        raise ScenarioError(f"{source}: {_why_empty(spec, skipped)}")
    return rows


def _chain(first: tuple[int, Any], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield first
    yield from rest


def _measured(
    p: _Parsed, spec: DatasetSpec, count_tokens: Callable[[str], int]
) -> DatasetRow | None:
    """The row with its prompt counted and its output length chosen; None if it has none."""
    if isinstance(p.prompt, str):
        prompt_tokens = count_tokens(p.prompt)
    else:
        prompt_tokens = sum(count_tokens(m["content"]) for m in p.prompt)
    mode = spec.output_tokens
    out: int | None = None
    if mode in ("dataset", "auto"):
        out = p.output_tokens
    if out is None and mode in ("answer", "auto") and p.answer is not None:
        out = count_tokens(p.answer) or None
    if out is None and mode in ("dataset", "answer"):
        return None
    return DatasetRow(p.prompt, p.answer, out, p.line, prompt_tokens, p.images)


def _passes(row: DatasetRow, spec: DatasetSpec) -> bool:
    if spec.min_prompt_tokens is not None and row.prompt_tokens < spec.min_prompt_tokens:
        return False
    if spec.max_prompt_tokens is not None and row.prompt_tokens > spec.max_prompt_tokens:
        return False
    return not (
        spec.max_output_tokens is not None
        and row.output_tokens is not None
        and row.output_tokens > spec.max_output_tokens
    )


def _why_empty(spec: DatasetSpec, skipped: dict[str, int]) -> str:
    filters = [
        f"{name} {value}"
        for name in ("min_prompt_tokens", "max_prompt_tokens", "max_output_tokens")
        if (value := getattr(spec, name)) is not None
    ]
    reasons = []
    if n := skipped["no human turn"]:
        reasons.append(_count(n, "conversation has", "conversations have") + " no human turn")
    if n := skipped["no output length"]:
        what = "output_tokens field" if spec.output_tokens == "dataset" else "answer"
        has = _count(n, "row has", "rows have")
        reasons.append(f"{has} no {what} (output_tokens: {spec.output_tokens})")
    if filters:
        text = f"no rows left after the length filters ({', '.join(filters)})"
        return f"{text}; {', '.join(reasons)}" if reasons else text
    return f"no rows left: {', '.join(reasons)}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# --- sampling -----------------------------------------------------------------------------


class RowSampler:
    """Rows for one stream of requests, drawn as ``DatasetSpec.sample`` and ``replace`` say.

    random: a seeded shuffle, taken in order, reshuffled when used up (every
    row once before any repeats); with ``replace``, independent uniform draws.
    sequential: file order from the first row, starting over at the end (no
    draw from ``rng``). Successive :meth:`take` calls continue the stream.
    """

    __slots__ = ("_order", "_pos", "_replace", "_rng", "_rows", "_sequential")

    def __init__(
        self, rows: Sequence[DatasetRow], rng: np.random.Generator, spec: DatasetSpec
    ) -> None:
        if not rows:
            raise ValueError("no rows to sample from")
        self._rows = rows
        self._rng = rng
        self._sequential = spec.sample == "sequential"
        self._replace = spec.replace
        self._order: list[int] = []
        self._pos = 0

    def take(self, n: int) -> list[DatasetRow]:
        """The next ``n`` rows."""
        size = len(self._rows)
        if self._sequential:
            picks = [(self._pos + i) % size for i in range(n)]
            self._pos = (self._pos + n) % size
        elif self._replace:
            picks = self._rng.integers(0, size, size=n).tolist()
        else:
            picks = []
            while len(picks) < n:
                if self._pos == len(self._order):
                    self._order = self._rng.permutation(size).tolist()
                    self._pos = 0
                more = self._order[self._pos : self._pos + n - len(picks)]
                self._pos += len(more)
                picks += more
        return [self._rows[i] for i in picks]


def sample_rows(
    rows: Sequence[DatasetRow], n: int, rng: np.random.Generator, spec: DatasetSpec
) -> list[DatasetRow]:
    """``n`` rows drawn from ``rows`` by a fresh :class:`RowSampler` (seeded by ``rng``)."""
    return RowSampler(rows, rng, spec).take(n)
