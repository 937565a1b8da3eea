"""--repeat N: whole sweeps N times, their run-to-run spread, and compare over repeats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli import main

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing


def _scenario(folder: Path, ttft_ms: int) -> Path:
    path = folder / f"s{ttft_ms}.yaml"
    path.write_text(
        f"""
name: rep{ttft_ms}
target:
  url: mock
  model: m
  extra_body: {{ignore_eos: true}}
  mock: {{args: ["--ttft-ms", "{ttft_ms}", "--itl-ms", "2"]}}
workload:
  prompt_tokens: {{dist: fixed, value: 16}}
  output_tokens: {{dist: fixed, value: 10}}
load: {{concurrency: [1, 2], requests_per_step: 16}}
"""
    )
    return path


def test_repeats_write_each_sweep_and_their_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fast"
    main(["run", str(_scenario(tmp_path, 5)), "--out", str(out), "--repeat", "3", "-q"])
    printed = capsys.readouterr().out
    for k in (1, 2, 3):
        assert (out / f"repeat-{k}" / "summary.json").is_file()
        assert f"results: {out / f'repeat-{k}'}" in printed
    assert "spread over 3 repeats" in printed
    spread = json.loads((out / "repeats.json").read_text())
    assert spread["repeats"] == 3 and len(spread["steps"]) == 2
    ttft = next(m for m in spread["steps"][0]["metrics"] if m["metric"] == "ttft_ms.p50")
    assert len(ttft["values"]) == 3 and ttft["min"] <= ttft["mean"] <= ttft["max"]
    assert 4.0 < ttft["mean"] < 15.0 and ttft["std"] is not None
    assert "| ttft_ms.p50 |" in (out / "repeats.md").read_text()


def test_compare_over_repeats_uses_their_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    for ttft, out in ((5, fast), (25, slow)):
        main(["run", str(_scenario(tmp_path, ttft)), "--out", str(out), "--repeat", "2", "-q"])
    capsys.readouterr()
    gates = ["--fail-if", "ttft_ms.p50 > +10%", "--fail-if", "requests.error_rate > 0.5"]
    with pytest.raises(SystemExit) as info:
        main(["compare", str(fast), str(slow), "--out", str(tmp_path / "c"), *gates])
    assert info.value.code == 1
    text = capsys.readouterr().out
    assert text.count("REGRESSION, beyond the bound") == 2  # TTFT, both steps: beyond the spread
    assert "95% CI" in text
    # the table shows the repeats' means: about 5 ms against about 25 ms
    assert "ttft_ms.p50 > +10% at concurrency 1" in text
