"""target.models refused when it is wrong: one line naming the field, exit 2, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.results.files import resolved_scenario
from loadgen.scenario import load_scenario

LOAD = "load: {mode: concurrency, concurrency: [1], requests_per_step: 2}\n"

BAD = {
    "sum zero": (
        "target: {models: [{name: a, weight: 0}, {name: b, weight: 0}]}\n",
        "target.models: the weights sum to 0",
    ),
    "duplicate": (
        "target: {models: [{name: a}, {name: a, weight: 2}]}\n",
        "target.models: [1] repeats [0] ('a'): list each model once",
    ),
    "both": (
        "target: {model: a, models: [{name: b}]}\n",
        "target: give target.model (one model) or target.models (a mix), not both",
    ),
    "negative": ("target: {models: [{name: a, weight: -1}]}\n", "target.models[0].weight"),
    "not finite": ("target: {models: [{name: a, weight: .nan}]}\n", "target.models[0].weight"),
    "empty": ("target: {models: []}\n", "target.models: name at least one model"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_mix_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = BAD[case]
    path = tmp_path / "s.yaml"
    path.write_text(text + LOAD)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and expected in lines[0], lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_mix_reads_back_from_the_resolved_scenario(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "s.yaml"
    path.write_text("target: {models: [{name: base, weight: 3}, {name: lora}]}\n" + LOAD)
    sc = load_scenario(path)
    assert sc.target.model == "base"  # the first name stands for the mix where one is asked
    assert sc.target.mix == (("base", 3.0), ("lora", 1.0))
    resolved = resolved_scenario(sc)
    assert "model" not in resolved["target"]
    again = tmp_path / "resolved.yaml"
    again.write_text(yaml.safe_dump(resolved))
    assert load_scenario(again).target == sc.target
    # one model: the resolved file has no models key, as before mixes
    path.write_text("target: {model: m}\n" + LOAD)
    assert "models" not in resolved_scenario(load_scenario(path))["target"]
