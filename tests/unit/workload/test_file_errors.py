"""A file that is there but wrong inside: its reader's line names the field that gave it.

The loader checks that each file exists (tests/unit/scenario/test_inputs.py);
:meth:`Workload.prepare` reads them all before a run, lengths files included,
and puts the scenario field after the file's location in the reader's error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.errors import ScenarioError
from loadgen.scenario import TraceLoad, load_scenario
from loadgen.workload import Workload

LOAD = "load: {concurrency: [1], requests_per_step: 2}\n"


def prepare(tmp_path: Path, text: str) -> Workload:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    sc = load_scenario(path)
    trace = sc.load if isinstance(sc.load, TraceLoad) else None
    return Workload.prepare(sc.workload, chat=True, trace=trace)


def test_a_malformed_dataset_line_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"prompt": "hi"}\n{"prompt": \n')
    with pytest.raises(ScenarioError) as exc:
        prepare(tmp_path, "workload: {dataset: {path: d.jsonl}}\n" + LOAD)
    assert str(exc.value).startswith(f"{tmp_path / 'd.jsonl'}:2: workload.dataset.path: ")


@pytest.mark.parametrize("field", ["prompt_tokens", "output_tokens"])
def test_a_malformed_lengths_file_is_found_before_the_run(field: str, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("12\nmany\n")
    text = f"workload: {{{field}: {{dist: empirical, file: n.txt}}}}\n" + LOAD
    with pytest.raises(ScenarioError) as exc:
        prepare(tmp_path, text)
    assert str(exc.value).startswith(f"{tmp_path / 'n.txt'}:2: workload.{field}.file: ")
    assert "expected a positive integer, got 'many'" in str(exc.value)


def test_a_malformed_trace_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"timestamp": 1, "input_length": 5}\nnot json\n')
    with pytest.raises(ScenarioError) as exc:
        prepare(tmp_path, "load: {mode: trace, trace: t.jsonl, trace_format: mooncake}\n")
    assert str(exc.value).startswith(f"{tmp_path / 't.jsonl'}"), exc.value
    assert ": load.trace: " in str(exc.value)


def test_a_message_that_names_its_field_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ScenarioError) as exc:
        prepare(tmp_path, "workload: {tokenizer: tokenizer.json}\n" + LOAD)
    assert str(exc.value).count("workload.tokenizer") == 1
