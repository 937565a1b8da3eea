"""Every file loadgen reads for a scenario is a regular file of bounded size, read with a cap.

Probe (issue #20): ``loadgen run /dev/zero``. The old size check used ``stat``,
which says 0 for a device, and then read the file whole: a MemoryError
traceback, or 24 GB until the kernel killed it. A named pipe hung on its open.
Now the scenario file must be a regular file and is read no further than its
limit; so must every file the scenario names (dataset, trace, tokenizer,
lengths files, CA file), each no larger than its kind's bound. One line, exit 2.

The runs on the old code's behaviour are subprocesses with a 2 GiB address
space and a timeout, so that a regression fails fast instead of eating the
machine's memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.errors import ScenarioError
from loadgen.scenario import load_scenario
from loadgen.scenario.limits import MAX_FILE_BYTES

LOAD = "load: {concurrency: [1], requests_per_step: 2}\n"


def _small_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def loadgen(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_small_memory,
        check=False,
    )


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_a_scenario_that_is_not_a_regular_file_is_refused_unread(kind: str, tmp_path: Path) -> None:
    if kind == "device":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "fifo.yaml"
        os.mkfifo(path)  # nobody writes: the old code's open never returned
    for command in ("run", "workload"):
        err = _one_line(loadgen([command, str(path)], tmp_path))
        assert err == f"loadgen: {path}: cannot read the scenario: not a regular file; " + (
            "expected a YAML file"
        ), err


def test_a_scenario_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read the scenario: a folder"):
        load_scenario(tmp_path)


def test_a_scenario_file_is_read_no_further_than_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("name: n\n# " + "x" * 1_000_001 + "\n")
    with pytest.raises(ScenarioError, match="larger than 1000000 bytes"):
        load_scenario(path)


#: field -> the scenario naming PATH there
FIELDS = {
    "workload.dataset.path": "workload: {dataset: {path: PATH}}\n" + LOAD,
    "workload.tokenizer": "workload: {tokenizer: PATH}\n" + LOAD,
    "workload.prompt_tokens.file": "workload: {prompt_tokens: {dist: empirical, file: PATH}}\n"
    + LOAD,
    "load.trace": "load: {mode: trace, trace: PATH}\n",
    "target.tls.ca_file": "target: {url: 'https://127.0.0.1:9', model: m, "
    "tls: {ca_file: PATH}}\n" + LOAD,
}


@pytest.mark.parametrize("field", FIELDS)
def test_a_device_or_pipe_named_by_the_scenario_is_refused(field: str, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, word in (("/dev/zero", "a device"), (str(fifo), "a pipe")):
        path = tmp_path / "s.yaml"
        path.write_text(FIELDS[field].replace("PATH", target))
        err = _one_line(loadgen(["run", str(path), "--out", str(tmp_path / "o")], tmp_path))
        assert f"{path}: {field}: " in err and f"{word}, not a regular file" in err, err


def test_a_tokenizer_folder_whose_tokenizer_json_is_a_device_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer.json").symlink_to("/dev/zero")
    path = tmp_path / "s.yaml"
    path.write_text(FIELDS["workload.tokenizer"].replace("PATH", str(model)))
    with pytest.raises(ScenarioError, match=r"workload.tokenizer: .*no tokenizer.json"):
        load_scenario(path)


@pytest.mark.parametrize(
    ("field", "kind"),
    [
        ("workload.dataset.path", "dataset"),
        ("workload.prompt_tokens.file", "lengths file"),
        ("target.tls.ca_file", "CA file"),
    ],
)
def test_a_file_larger_than_its_kind_is_read_is_refused(
    field: str, kind: str, tmp_path: Path
) -> None:
    """A sparse file: its size costs no disk."""
    big = tmp_path / "big"
    with big.open("wb") as f:
        f.truncate(MAX_FILE_BYTES[kind] + 1)
    path = tmp_path / "s.yaml"
    path.write_text(FIELDS[field].replace("PATH", str(big)))
    with pytest.raises(ScenarioError) as exc:
        load_scenario(path)
    line = str(exc.value)
    assert f"{field}: " in line and f"more than the {MAX_FILE_BYTES[kind]} read" in line, line
