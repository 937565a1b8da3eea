"""``cost.gpus``: the GPUs serving, a whole number above 0; anything else is refused in one
line naming the file, the field and the value (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.scenario.load import load_scenario

BASE = """
name: t
target: {{url: mock, api: openai-chat, model: m}}
load: {{mode: concurrency, concurrency: [1], requests_per_step: 4}}
cost: {{usd_per_hour: 2.0, gpus: {gpus}}}
"""


def test_cost_gpus_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(gpus=8))
    assert load_scenario(path).cost.gpus == 8


@pytest.mark.parametrize("gpus", ["0", "-1", "1.5", "two"])
def test_a_bad_gpu_count_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gpus: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(gpus=gpus))
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "cost.gpus" in err[0], err
    assert gpus in err[0] and "Traceback" not in err[0]
