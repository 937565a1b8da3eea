"""Datasets: both layouts parse, filters and output lengths, seeded sampling, one-line errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from loadgen.errors import ScenarioError
from loadgen.scenario.dists import DatasetSpec
from loadgen.workload.datasets import (
    DatasetRow,
    RowSampler,
    json_array_items,
    load_dataset,
    sample_rows,
)

DATA = Path(__file__).resolve().parents[3] / "scenarios" / "data"


def words(text: str) -> int:
    return len(text.split())


def spec(path: Path | str, **fields: Any) -> DatasetSpec:
    return DatasetSpec(path=str(path), **fields)


def jsonl(tmp_path: Path, *rows: Any, name: str = "data.jsonl") -> Path:
    f = tmp_path / name
    f.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return f


def load(path: Path, **fields: Any) -> list[DatasetRow]:
    return load_dataset(spec(path, **fields), words)


def error(path: Path, **fields: Any) -> str:
    with pytest.raises(ScenarioError) as err:
        load(path, **fields)
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# --- parsing ------------------------------------------------------------------------------


def test_jsonl_prompt_and_messages_rows(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path,
        {"prompt": "one two three", "output_tokens": 7, "id": "ignored"},
        "",
        {
            "messages": [
                {"role": "system", "content": "be brief", "name": "ignored"},
                {"role": "user", "content": "four five"},
                {"role": "assistant", "content": "six seven eight"},
            ]
        },
        {"prompt": "nine", "answer": "ten eleven"},
    )
    rows = load(f)
    assert rows == [
        DatasetRow("one two three", None, 7, 1, 3),
        DatasetRow(
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "four five"}],
            "six seven eight",  # the final assistant message is the answer, not sent
            3,  # auto: no output_tokens, so the answer's counted length
            3,  # line 2 is blank
            4,  # message contents counted and summed
        ),
        DatasetRow("nine", "ten eleven", 2, 4, 1),
    ]


def test_shipped_mini_chat() -> None:
    rows = load(DATA / "mini-chat.jsonl")
    assert len(rows) >= 60
    assert {type(r.prompt) for r in rows} == {str, list}
    assert sum(r.answer is not None for r in rows) >= 10
    lengths = [r.prompt_tokens for r in rows]
    assert min(lengths) <= 3 and max(lengths) >= 250
    assert [r.line for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        if isinstance(r.prompt, list):
            assert r.prompt[-1]["role"] == "user"


def test_shipped_mini_sharegpt_first_and_all_turns() -> None:
    first = load(DATA / "mini-sharegpt.json")
    assert len(first) >= 10
    assert all(isinstance(r.prompt, str) and r.answer for r in first)
    raw = json.loads((DATA / "mini-sharegpt.json").read_text())
    for row, conv in zip(first, raw, strict=True):
        turns = conv["conversations"]
        human = next(i for i, t in enumerate(turns) if t["from"] == "human")
        assert row.prompt == turns[human]["value"]
        assert row.answer == turns[human + 1]["value"]
        assert row.output_tokens == words(turns[human + 1]["value"])
    lines = (DATA / "mini-sharegpt.json").read_text().split("\n")
    assert all(lines[r.line - 1].strip() == "{" for r in first)  # where each conversation starts

    every = load(DATA / "mini-sharegpt.json", sharegpt_turns="all")
    multi = [r for r in every if isinstance(r.prompt, list) and len(r.prompt) > 1]
    assert multi  # some conversations have several turns
    for r in every:
        assert isinstance(r.prompt, list) and r.prompt[-1]["role"] == "user"


def test_sharegpt_prompt_is_first_or_last_human_turn(tmp_path: Path) -> None:
    conv = {
        "conversations": [
            {"from": "system", "value": "sys"},
            {"from": "human", "value": "q one"},
            {"from": "gpt", "value": "a one"},
            {"from": "human", "value": "q two please"},
            {"from": "gpt", "value": "a two here now"},
        ]
    }
    f = tmp_path / "sg.json"
    f.write_text(json.dumps([conv]))
    (row,) = load(f)
    assert (row.prompt, row.answer, row.prompt_tokens, row.output_tokens) == (
        "q one",
        "a one",
        2,
        2,
    )
    (row,) = load(f, sharegpt_turns="all")
    assert row.prompt == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q one"},
        {"role": "assistant", "content": "a one"},
        {"role": "user", "content": "q two please"},
    ]
    assert (row.answer, row.prompt_tokens, row.output_tokens) == ("a two here now", 8, 4)


def test_sharegpt_as_jsonl_and_conversations_without_a_human_turn(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path,
        {"conversations": [{"from": "gpt", "value": "hello there"}]},
        {"conversations": []},
        {"conversations": [{"from": "human", "value": "hi"}]},
    )
    (row,) = load(f, output_tokens="distribution")  # the first two are skipped
    assert (row.prompt, row.answer, row.output_tokens, row.line) == ("hi", None, None, 3)
    assert error(f, output_tokens="answer") == (
        f"{f}: no rows left: 2 conversations have no human turn, "
        "1 row has no answer (output_tokens: answer)"
    )


def test_format_can_be_forced(tmp_path: Path) -> None:
    f = jsonl(tmp_path, {"conversations": [{"from": "human", "value": "hi"}]})
    assert error(f, format="jsonl") == f'{f}:1: expected "prompt" or "messages"'
    g = jsonl(tmp_path, {"prompt": "hi"}, name="p.jsonl")
    assert error(g, format="sharegpt") == f'{g}:1: expected "conversations"'


def test_a_json_array_of_prompt_rows(tmp_path: Path) -> None:
    f = tmp_path / "rows.json"
    f.write_text('[\n  {"prompt": "a b", "output_tokens": 3},\n\n  {"prompt": "c"}\n]\n')
    rows = load(f)
    assert [(r.prompt, r.line, r.output_tokens) for r in rows] == [("a b", 2, 3), ("c", 4, None)]


def test_bom_is_dropped(tmp_path: Path) -> None:
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"prompt": "x"}\n')
    assert load(f)[0].prompt == "x"


def test_unicode_line_separators_inside_strings_do_not_split_lines(tmp_path: Path) -> None:
    f = tmp_path / "u.jsonl"
    f.write_text('{"prompt": "a\u2028b c"}\n{"prompt": "d"}\n', encoding="utf-8")
    assert [(r.prompt, r.line) for r in load(f)] == [("a\u2028b c", 1), ("d", 2)]


# --- output lengths and filters -----------------------------------------------------------


def mixed(tmp_path: Path) -> Path:
    return jsonl(
        tmp_path,
        {"prompt": "w " * 5, "output_tokens": 50},
        {"prompt": "w " * 20, "answer": "x " * 30},
        {"prompt": "w " * 50, "output_tokens": 10, "answer": "x " * 4},
        {"prompt": "w " * 100},
    )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("auto", [(1, 50), (2, 30), (3, 10), (4, None)]),
        ("dataset", [(1, 50), (3, 10)]),
        ("answer", [(2, 30), (3, 4)]),
        ("distribution", [(1, None), (2, None), (3, None), (4, None)]),
    ],
)
def test_output_tokens_modes(tmp_path: Path, mode: str, expected: list[Any]) -> None:
    rows = load(mixed(tmp_path), output_tokens=mode)
    assert [(r.line, r.output_tokens) for r in rows] == expected


def test_length_filters_and_limit(tmp_path: Path) -> None:
    f = mixed(tmp_path)
    assert [r.line for r in load(f, min_prompt_tokens=20)] == [2, 3, 4]
    assert [r.line for r in load(f, max_prompt_tokens=20)] == [1, 2]
    assert [r.line for r in load(f, min_prompt_tokens=6, max_prompt_tokens=50)] == [2, 3]
    assert [r.line for r in load(f, max_output_tokens=30)] == [2, 3, 4]  # 4 has none: kept
    assert [r.line for r in load(f, min_prompt_tokens=6, limit=2)] == [2, 3]
    assert [r.prompt_tokens for r in load(f)] == [5, 20, 50, 100]


def test_limit_stops_reading(tmp_path: Path) -> None:
    f = jsonl(tmp_path, {"prompt": "a"}, {"prompt": "b"}, "not json")
    assert [r.prompt for r in load(f, limit=2)] == ["a", "b"]
    assert error(f).startswith(f"{f}:3: not valid JSON")


def test_no_rows_left_after_filters(tmp_path: Path) -> None:
    f = mixed(tmp_path)
    assert error(f, min_prompt_tokens=101) == (
        f"{f}: no rows left after the length filters (min_prompt_tokens 101)"
    )
    assert error(f, min_prompt_tokens=30, max_prompt_tokens=40) == (
        f"{f}: no rows left after the length filters (min_prompt_tokens 30, max_prompt_tokens 40)"
    )
    assert error(f, output_tokens="dataset", max_output_tokens=5) == (
        f"{f}: no rows left after the length filters (max_output_tokens 5); "
        "2 rows have no output_tokens field (output_tokens: dataset)"
    )


def test_empty_file(tmp_path: Path) -> None:
    f = jsonl(tmp_path, "", "  ")
    assert error(f) == f"{f}: no rows (the file is empty)"
    g = tmp_path / "empty.json"
    g.write_text("[]")
    assert error(g) == f"{g}: no rows (the file is empty)"


def test_spec_rules() -> None:
    with pytest.raises(ValidationError, match="must be >= min_prompt_tokens"):
        DatasetSpec(path="x", min_prompt_tokens=10, max_prompt_tokens=5)
    with pytest.raises(ValidationError, match="max_output_tokens filters rows"):
        DatasetSpec(path="x", output_tokens="distribution", max_output_tokens=5)
    with pytest.raises(ValidationError, match="replace applies to sample random only"):
        DatasetSpec(path="x", sample="sequential", replace=True)
    with pytest.raises(ValidationError, match="Extra inputs"):
        DatasetSpec.model_validate({"path": "x", "shuffle": True})
    with pytest.raises(ValidationError, match="Input should be 'auto', 'jsonl' or 'sharegpt'"):
        DatasetSpec.model_validate({"path": "x", "format": "csv"})


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"prompt": "a"', "not valid JSON: Expecting ',' delimiter (column 15)"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ('"text"', "expected a JSON object, got a string"),
        ('{"text": "a"}', 'expected "prompt" or "messages"'),
        ('{"prompt": "a", "messages": []}', 'expected "prompt" or "messages", not both'),
        ('{"prompt": ""}', "prompt: expected a non-empty string"),
        ('{"prompt": 5}', "prompt: expected a non-empty string"),
        (
            '{"prompt": "a", "output_tokens": 0}',
            "output_tokens: expected a positive integer, got 0",
        ),
        (
            '{"prompt": "a", "output_tokens": "9"}',
            "output_tokens: expected a positive integer, got '9'",
        ),
        (
            '{"prompt": "a", "output_tokens": true}',
            "output_tokens: expected a positive integer, got True",
        ),
        ('{"prompt": "a", "answer": 3}', "answer: expected a string, got a number"),
        ('{"messages": []}', 'messages: expected a non-empty list of {"role", "content"} objects'),
        (
            '{"messages": "hi"}',
            'messages: expected a non-empty list of {"role", "content"} objects',
        ),
        (
            '{"messages": [{"role": "user"}]}',
            'messages[0]: expected {"role": ..., "content": "..."}',
        ),
        (
            '{"messages": [{"role": "user", "content": "a"}, "b"]}',
            'messages[1]: expected {"role": ..., "content": "..."}',
        ),
        (
            '{"messages": [{"role": "user", "content": 1}]}',
            'messages[0]: expected {"role": ..., "content": "..."}',
        ),
        (
            '{"messages": [{"role": "bot", "content": "a"}]}',
            "messages[0].role: expected system, user or assistant, got 'bot'",
        ),
        (
            '{"messages": [{"role": "system", "content": "a"}]}',
            "messages: expected a user message last (before any final answer)",
        ),
        (
            '{"messages": [{"role": "assistant", "content": "a"}]}',
            "messages: expected a user message last (before any final answer)",
        ),
        (
            '{"messages": [{"role": "user", "content": "a"}, '
            '{"role": "assistant", "content": "b"}], "answer": "c"}',
            'give "answer" or a final assistant message, not both',
        ),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    f = jsonl(tmp_path, {"prompt": "fine"}, "", line)
    assert error(f) == f"{f}:3: {message}"


@pytest.mark.parametrize(
    ("conv", "message"),
    [
        ({"conversations": "x"}, 'conversations: expected a list of {"from", "value"} objects'),
        (
            {"conversations": [{"from": "human"}]},
            'conversations[0]: expected {"from": ..., "value": "..."}',
        ),
        (
            {"conversations": [{"from": "human", "value": "a"}, {"from": "bot", "value": "b"}]},
            "conversations[1].from: expected human, gpt or system, got 'bot'",
        ),
        (
            {"conversations": [{"from": 3, "value": "a"}]},
            "conversations[0].from: expected human, gpt or system, got 3",
        ),
        ({"id": 1}, 'expected "conversations"'),
        ([], "expected a JSON object, got an array"),
    ],
)
def test_sharegpt_errors_name_file_and_line(tmp_path: Path, conv: Any, message: str) -> None:
    f = tmp_path / "sg.json"
    good = {"conversations": [{"from": "human", "value": "ok"}]}
    f.write_text("[\n" + json.dumps(good) + ",\n" + json.dumps(conv) + "\n]\n")
    assert error(f) == f"{f}:3: {message}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[\n  {"prompt": "a"},\n  {"prompt": }\n]',
            ":3: not valid JSON: Expecting value (column 14)",
        ),
        (
            '[\n  {"prompt": "a"}\n  {"prompt": "b"}\n]',
            ":3: not valid JSON: expected ',' or ']' after an item",
        ),
        ('[{"prompt": "a"}]\n[]', ":2: not valid JSON: extra data after the array"),
    ],
)
def test_broken_json_arrays(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "d.json"
    f.write_text(text)
    assert error(f) == f"{f}{message}"


def test_missing_file_directory_and_not_utf8(tmp_path: Path) -> None:
    assert error(tmp_path / "nope.jsonl") == (
        f"{tmp_path / 'nope.jsonl'}: cannot read the dataset: No such file or directory"
    )
    assert error(tmp_path).startswith(f"{tmp_path}: cannot read the dataset: ")
    f = tmp_path / "latin1.jsonl"
    f.write_bytes(b'{"prompt": "ok"}\n{"prompt": "caf\xe9"}\n')
    assert error(f) == f"{f}:2: not UTF-8 text (byte 0xe9)"


def test_relative_path_against_base_dir(tmp_path: Path) -> None:
    jsonl(tmp_path, {"prompt": "x y"})
    rows = load_dataset(spec("data.jsonl"), words, base_dir=tmp_path)
    assert rows[0].prompt_tokens == 2


def test_json_array_items_reports_start_lines() -> None:
    items = json_array_items('[1,\n  {"a":\n 2}, "x",\n\n 3]', "f")
    assert items == [(1, 1), (2, {"a": 2}), (3, "x"), (5, 3)]


# --- sampling -----------------------------------------------------------------------------


def rows_of(n: int) -> list[DatasetRow]:
    return [DatasetRow(f"p{i}", None, None, i + 1, 1) for i in range(n)]


def test_random_without_replacement_uses_every_row_before_repeating() -> None:
    rows = rows_of(10)
    got = sample_rows(rows, 25, np.random.default_rng(3), spec("x"))
    assert sorted(r.line for r in got[:10]) == list(range(1, 11))
    assert sorted(r.line for r in got[10:20]) == list(range(1, 11))
    assert [r.line for r in got[:10]] != list(range(1, 11))  # shuffled
    assert [r.line for r in got[:10]] != [r.line for r in got[10:20]]  # reshuffled each pass


def test_sampler_continues_its_stream_across_takes() -> None:
    rows = rows_of(7)
    one = RowSampler(rows, np.random.default_rng(9), spec("x"))
    batched = one.take(3) + one.take(5) + one.take(6)
    assert batched == sample_rows(rows, 14, np.random.default_rng(9), spec("x"))
    seq = RowSampler(rows, np.random.default_rng(0), spec("x", sample="sequential"))
    assert [r.line for r in seq.take(5) + seq.take(5)] == [1, 2, 3, 4, 5, 6, 7, 1, 2, 3]


def test_random_with_replacement_is_uniform_and_repeats() -> None:
    rows = rows_of(4)
    got = sample_rows(rows, 40_000, np.random.default_rng(1), spec("x", replace=True))
    counts = Counter(r.line for r in got)
    assert set(counts) == {1, 2, 3, 4}
    assert all(c == pytest.approx(10_000, rel=0.05) for c in counts.values())
    small = sample_rows(rows_of(50), 50, np.random.default_rng(1), spec("x", replace=True))
    assert len({r.line for r in small}) < 50  # with replacement some repeat within one pass


@pytest.mark.parametrize("fields", [{}, {"replace": True}, {"sample": "sequential"}])
def test_sampling_is_seeded(fields: dict[str, Any]) -> None:
    rows = rows_of(30)
    s = spec("x", **fields)
    a = sample_rows(rows, 40, np.random.default_rng([0, 1, 0]), s)
    b = sample_rows(rows, 40, np.random.default_rng([0, 1, 0]), s)
    c = sample_rows(rows, 40, np.random.default_rng([0, 2, 0]), s)
    assert a == b
    if fields.get("sample") == "sequential":
        assert a == c and [r.line for r in a[:3]] == [1, 2, 3]
    else:
        assert a != c


def test_sampling_nothing() -> None:
    with pytest.raises(ValueError, match="no rows"):
        RowSampler([], np.random.default_rng(0), spec("x"))
    assert sample_rows(rows_of(3), 0, np.random.default_rng(0), spec("x")) == []
