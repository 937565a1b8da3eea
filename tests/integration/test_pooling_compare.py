"""Two pooling runs (embeddings, rerank against the mock) compared, gated and spread as a user
sees them: no token timing or output tokens/s anywhere, requests/s and inputs/s instead.

``loadgen compare`` prints (and writes in comparison.md) E2E, requests/s, goodput,
inputs/s (documents/s for rerank), input tokens/s and the error rate, the overlays plot
E2E against requests/s; a ``--fail-if`` on TTFT or output tokens/s is one line, exit 2
(it could only ever be "not checked"), one on inputs/s is judged; ``--repeat``'s spread
of the same two runs is over the pooling figures. report.md's run section says where E2E
counts from (``E2E from the send``), not TTFT.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.compare.repeats import spread
from loadgen.records import Record
from loadgen.report.repeats import render_console
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "openai-embeddings": ({"batch": {"dist": "uniform", "min": 1, "max": 8}}, "inputs"),
    "rerank": (
        {
            "documents": {"dist": "uniform", "min": 2, "max": 6},
            "query_tokens": {"dist": "fixed", "value": 8},
        },
        "documents",
    ),
}
TOKEN_WORDS = ("TTFT", "ITL", "TPOT", "output tok")


def _loadgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("api", list(CASES))
def test_pooling_runs_compare_by_requests_and_inputs(
    run: RunFixture, scenario: Make, tmp_path: Path, api: str
) -> None:
    workload, word = CASES[api]
    sc = scenario(
        target={"api": api},
        workload={"prompt_tokens": {"dist": "uniform", "min": 16, "max": 48}, **workload},
        load={"concurrency": [1, 4], "requests_per_step": 20, "warmup_requests": 2},
    )
    (a, _, dir_a), (b, _, dir_b) = run(sc, reports=True), run(sc)
    out = tmp_path / "cmp"
    report = (dir_a / "report.md").read_text()
    assert "- metrics profile: loadgen: loadgen's own formulas (E2E from the send)" in report
    assert not [w for w in TOKEN_WORDS if w in report], report

    plain = _loadgen("compare", str(dir_a), str(dir_b), "--out", str(out))
    assert plain.returncode == 0, plain.stderr
    titles = [line for line in plain.stdout.splitlines() if line.endswith(")") and "  " not in line]
    assert titles == [
        "E2E p50 (ms)", "E2E p99 (ms)", "requests/s (req/s)", "goodput (req/s)",
        f"{word} (/s)", "input tokens/s (tok/s)", "error rate (%)",
    ]  # fmt: skip
    for text in (plain.stdout, (out / "comparison.md").read_text()):
        assert not [w for w in TOKEN_WORDS if w in text], text
    md = (out / "comparison.md").read_text()
    assert "requests/s vs load" in md and "compare_e2e_ms.png" in md
    assert not (out / "compare_ttft_ms.png").exists()
    inputs = a.steps[0].throughput.inputs_per_s
    assert inputs is not None and f"{inputs:,.2f}" in plain.stdout

    for gate in ("ttft_ms.p99 > +10%", "throughput.output_tokens_per_s < -5%", "tpot_ms.p50 > 1"):
        bad = _loadgen("compare", str(dir_a), str(dir_b), "--out", str(out), "--fail-if", gate)
        assert bad.returncode == 2, bad.stdout + bad.stderr
        err = bad.stderr.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert f"is a pooling run ({api}): it has no token timing" in err
        assert "gate one of e2e_ms.p99, throughput.requests_per_s, throughput.inputs_per_s" in err
    gated = _loadgen(
        "compare", str(dir_a), str(dir_b), "--out", str(out),
        "--fail-if", "throughput.inputs_per_s < -99%",
    )  # fmt: skip
    assert gated.returncode == 0, gated.stderr
    assert gated.stdout.startswith("throughput.inputs_per_s < -99%: no regression (concurrency 1")

    s = spread([a, b], ["run1", "run2"])
    assert [m.metric for m in s.steps[0].metrics] == [
        "e2e_ms.p50", "e2e_ms.p99", "throughput.requests_per_s", "throughput.inputs_per_s",
        "throughput.input_tokens_per_s", "requests.error_rate",
    ]  # fmt: skip
    console = render_console(s)
    assert "throughput.requests_per_s" in console and "throughput.inputs_per_s" in console
    assert "ttft" not in console and "output_tokens" not in console
