"""What a scenario names outside itself is checked at load: one line naming file, field, path.

Each file field (dataset, tokenizer, lengths files, trace, CA file) given a path
that is missing or a folder, each environment variable unset, and each unknown
key (reported before the errors it causes, with the closest known name): exit 2
with one line on stderr, for ``loadgen run`` and ``loadgen workload`` alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import certifi
import pytest

from loadgen.cli import main
from loadgen.errors import ScenarioError
from loadgen.scenario import load_scenario

LOAD = "load: {concurrency: [1], requests_per_step: 2}\n"
REAL = "target: {url: 'http://127.0.0.1:9', model: m}\n"

#: field -> a scenario naming ``data/nope`` there
FILE_FIELDS = {
    "workload.dataset.path": "workload: {dataset: {path: data/nope}}\n" + LOAD,
    "workload.tokenizer": "workload: {tokenizer: data/nope}\n" + LOAD,
    "workload.prompt_tokens.file": (
        "workload: {prompt_tokens: {dist: empirical, file: data/nope}}\n" + LOAD
    ),
    "workload.output_tokens.file": (
        "workload: {output_tokens: {dist: empirical, file: data/nope}}\n" + LOAD
    ),
    "workload.sessions.turns.file": (
        "workload: {sessions: {turns: {dist: empirical, file: data/nope}}}\n" + LOAD
    ),
    "load.trace": "load: {mode: trace, trace: data/nope}\n",
    "target.tls.ca_file": "target: {url: 'https://127.0.0.1:9', model: m, "
    "tls: {ca_file: data/nope}}\n" + LOAD,
}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    return int(exc.value.code or 0), capsys.readouterr().err


def refused(path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """The one stderr line of both ``run`` and ``workload`` on ``path`` (exit 2 each)."""
    lines = []
    for args in (["run", str(path), "--out", str(tmp_path / "out")], ["workload", str(path)]):
        code, err = run_cli(args, capsys)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        lines.append(err.strip())
    assert lines[0] == lines[1]
    assert not (tmp_path / "out").exists()
    return lines[0]


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The scenario's folder; the current directory is another one."""
    folder = tmp_path / "scenarios"
    (folder / "data").mkdir(parents=True)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return folder


@pytest.mark.parametrize("field", sorted(FILE_FIELDS))
def test_a_missing_file_names_scenario_field_and_resolved_path(
    field: str, elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FILE_FIELDS[field]
    if field == "workload.sessions.turns.file":
        text = "target: {api: openai-chat}\n" + text
    sc = elsewhere / "s.yaml"
    sc.write_text(text)
    line = refused(sc, capsys, tmp_path)
    resolved = elsewhere / "data" / "nope"
    assert line.startswith(f"loadgen: {sc}: {field}: "), line
    assert f" {resolved}: no such file" in line
    assert "; expected " in line and "'data/nope' is read from the scenario's folder" in line


@pytest.mark.parametrize(
    ("field", "why"),
    [
        ("workload.dataset.path", "is a folder, not a file"),
        ("target.tls.ca_file", "is a folder, not a file"),
        ("workload.tokenizer", "a folder with no tokenizer.json in it"),
    ],
)
def test_a_folder_where_a_file_is_expected(
    field: str, why: str, elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (elsewhere / "data" / "nope").mkdir()
    sc = elsewhere / "s.yaml"
    sc.write_text(FILE_FIELDS[field])
    line = refused(sc, capsys, tmp_path)
    assert f"{sc}: {field}: " in line and f"{elsewhere / 'data' / 'nope'}: {why}" in line


def test_a_ca_file_is_read_from_the_scenario_folder(elsewhere: Path) -> None:
    shutil.copy(certifi.where(), elsewhere / "ca.pem")
    sc = elsewhere / "s.yaml"
    sc.write_text("target: {url: 'https://127.0.0.1:9', model: m, tls: {ca_file: ca.pem}}\n" + LOAD)
    assert load_scenario(sc).target.tls.ca_file == str(elsewhere / "ca.pem")


def test_a_ca_file_that_is_not_pem(elsewhere: Path) -> None:
    (elsewhere / "ca.pem").write_text("not a certificate\n")
    sc = elsewhere / "s.yaml"
    sc.write_text("target: {url: 'https://127.0.0.1:9', model: m, tls: {ca_file: ca.pem}}\n" + LOAD)
    with pytest.raises(
        ScenarioError, match=r"target\.tls\.ca_file: CA file .*ca\.pem: holds no PEM"
    ):
        load_scenario(sc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a misspelt key makes the real one missing: the misspelling is the cause
        (
            "target: {url: 'http://127.0.0.1:9', modle: llama}\n" + LOAD,
            "target.modle: unknown field; did you mean model?",
        ),
        ("lod: {concurrency: [1]}\n", "lod: unknown field; did you mean load?"),
        (
            "load: {concurrency: [1], requests_per_stp: 2}\n",
            "load.requests_per_stp: unknown field; did you mean requests_per_step?",
        ),
        (
            "workload: {prompt_tokens: {dist: uniform, min: 1, mx: 4}}\n" + LOAD,
            "workload.prompt_tokens.mx: unknown field; did you mean max?",
        ),
        (
            "load: {mode: rate, rate: [1], requests_per_step: 2, arival: poisson}\n",
            "load.arival: unknown field; did you mean arrival?",
        ),
        (
            "colour: blue\n" + LOAD,
            "colour: unknown field; expected one of: cost, load, name, sla, target, telemetry",
        ),
        (
            "load: {concurrency: [1], requests_per_step: 2, arrival: gamma}\n",
            "load.arrival: unknown field for mode concurrency; it is a field of mode rate",
        ),
    ],
)
def test_an_unknown_key_is_reported_first_with_the_closest_name(
    text: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text(text)
    assert refused(sc, capsys, tmp_path).startswith(f"loadgen: {sc}: {expected}")


@pytest.mark.parametrize(
    ("field", "yaml", "value", "state"),
    [
        ("target.api_key_env", "target: {url: mock, api_key_env: LG_TEST_KEY}", None, "is not set"),
        ("target.api_key_env", "target: {url: mock, api_key_env: LG_TEST_KEY}", "", "is empty"),
        ("telemetry.token_env", "telemetry: {token_env: LG_TEST_KEY}", None, "is not set"),
    ],
)
def test_an_unset_variable_is_refused_at_load(
    field: str,
    yaml: str,
    value: str | None,
    state: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if value is None:
        monkeypatch.delenv("LG_TEST_KEY", raising=False)
    else:
        monkeypatch.setenv("LG_TEST_KEY", value)
    sc = tmp_path / "s.yaml"
    sc.write_text(yaml + "\n" + LOAD)
    line = refused(sc, capsys, tmp_path)
    assert line.startswith(f"loadgen: {sc}: {field}: the environment variable LG_TEST_KEY {state}")


def test_a_set_variable_is_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from loadgen.target.options import target_headers

    monkeypatch.setenv("LG_TEST_KEY", "sk-1")
    sc = tmp_path / "s.yaml"
    sc.write_text(REAL.replace("model: m", "model: m, api_key_env: LG_TEST_KEY") + LOAD)
    assert target_headers(load_scenario(sc))["Authorization"] == "Bearer sk-1"


def test_a_past_runs_scenario_reads_back_without_its_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`loadgen report` rebuilds a summary from scenario.yaml: its files and key may be gone."""
    from loadgen.results.rebuild import rebuild_summary

    monkeypatch.delenv("LG_TEST_KEY", raising=False)
    (tmp_path / "scenario.yaml").write_text(
        REAL.replace("model: m", "model: m, api_key_env: LG_TEST_KEY")
        + "workload: {dataset: {path: /nonexistent/d.jsonl}}\n"
        + LOAD
    )
    (tmp_path / "records.jsonl").write_text("")
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "scenario.yaml")
    assert rebuild_summary(tmp_path).target_url == "http://127.0.0.1:9"
