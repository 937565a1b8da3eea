"""``--mlflow``'s value is a tracking store, never a scenario file click took for it.

``loadgen run --mlflow s.yaml`` hands click ``s.yaml`` as the option's value;
without the check MLflow would make (or fail to make) a folder store of that
name, or the run would say only that no SCENARIO was given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.cli.export import check_mlflow_value
from loadgen.errors import ScenarioError


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_run_with_the_scenario_after_mlflow_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("target: {url: mock}\nload: {concurrency: [1]}\n")
    code, out, err = _cli(["run", "--mlflow", "s.yaml"], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "loadgen: --mlflow s.yaml: is a file, not a tracking store: the option takes the "
        "next word as its URI; write --mlflow=URI, or put --mlflow after the other "
        "arguments (docs/export.md)"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]  # no store, no results


def test_a_missing_yaml_is_taken_for_a_scenario_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["run", "--mlflow", "gone.yml", "--url", "http://127.0.0.1:1"], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "--mlflow gone.yml: looks like a scenario file, not a tracking store" in line
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_a_file_uri_of_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("x")
    (tmp_path / "run").mkdir()
    code, _, err = _cli(["export", str(tmp_path / "run"), f"--mlflow=file://{target}"], capsys)
    assert code == 2
    assert f"--mlflow file://{target}: is a file, not a tracking store" in err


def test_stores_are_not_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    db.write_text("")
    (tmp_path / "mlruns").mkdir()
    for value in (
        None,
        f"sqlite:///{db}",  # a file, named through its scheme
        str(tmp_path / "mlruns"),
        f"file://{tmp_path / 'mlruns'}",
        str(tmp_path / "new-store"),  # a folder MLflow will make
        "http://127.0.0.1:5000",
    ):
        check_mlflow_value(value)
    with pytest.raises(ScenarioError, match="is a file"):
        check_mlflow_value(str(db))
