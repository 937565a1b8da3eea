"""The live view as a person sees it: `loadgen run` under a pseudo-terminal, the screen read back.

The run drives the real mock over 127.0.0.1, with the mock's /metrics and a
fake-GPU agent as telemetry; the screen is a pyte terminal emulator fed
everything the run wrote. Mid-run the view's lines are on screen (step,
requests, rolling TTFT with a number, server and GPU lines); after the first
step its table sits above the view; at the end the view is gone and the
tables and verdict remain. ``--no-live`` on the same terminal and a run whose
stdout is a pipe show none of the view.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import Spawn
from tests.integration.pty_run import run_in_pty

ROOT = Path(__file__).resolve().parents[2]


def scenario(tmp_path: Path, agent: str | None = None) -> Path:
    telemetry = (
        f"telemetry: {{server_metrics: target, agents: ['{agent}'], interval_s: 0.25}}\n"
        if agent
        else ""
    )
    path = tmp_path / "live.yaml"
    path.write_text(
        f"""
name: live
target: {{url: mock, api: openai-completions, model: m, extra_body: {{ignore_eos: true}}}}
workload:
  prompt_tokens: {{dist: fixed, value: 32}}
  output_tokens: {{dist: fixed, value: 16}}
  calibrate: false
load: {{mode: concurrency, concurrency: [2, 4], requests_per_step: 60}}
sla: {{ttft_ms: {{p50: 2000}}, e2e_ms: {{p99: 5000}}}}
{telemetry}"""
    )
    return path


def plain_env() -> dict[str, str]:
    """The test's environment without CI (which turns the view off) or a forced size."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS", "LINES")}
    return {**env, "TERM": "xterm-256color"}


def loadgen(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "loadgen", *(str(a) for a in args)]


def test_the_live_view_is_on_screen_while_the_run_goes_and_the_tables_stay(
    tmp_path: Path, agent_proc: Spawn
) -> None:
    _, agent = agent_proc("--fake-nvml", "1", "--interval-ms", "50")
    out = tmp_path / "out"
    seen = run_in_pty(loadgen("run", scenario(tmp_path, agent), "--out", out), env=plain_env())
    assert seen.code == 0, seen.last

    def frame_with(*patterns: str) -> str | None:
        return next((f for f in seen.frames if all(re.search(p, f, re.M) for p in patterns)), None)

    live = frame_with(
        r"^\[1/2\] concurrency 2 · step \d+ s left$",
        r"^requests \d+/60 done · 0 failed · [0-2] in flight · [\d.]+ req/s$",
        r"^last 10 s \(\d+ req\) +p50 +p99 +SLA$",
        r"^TTFT +\d+\.\d ms +\d+\.\d ms +p50 ≤ 2000 ms$",
        r"^E2E +\d+\.\d ms +\d+\.\d ms +p99 ≤ 5000 ms$",
        r"^loadgen  CPU \d+% · loop lag p99 \d+\.\d ms$",
    )
    assert live is not None, seen.frames[len(seen.frames) // 2]
    assert frame_with(r"^server   running \d+ · waiting \d+ · KV \d+%$"), seen.last
    assert frame_with(r"^GPU 0 +util \d+% · mem [\d.]+ GiB · \d+ W$"), seen.last
    assert frame_with(r"^output tok/s +[\d,]+  [▁▂▃▄▅▆▇█]+$"), seen.last
    # the first step's table is printed above the live area, which goes on below it
    between = frame_with(r"^step 0 · concurrency 2$", r"^\[2/2\] concurrency 4 · ")
    assert between is not None
    assert between.index("step 0 · concurrency 2") < between.index("[2/2] concurrency 4")
    # at the end: the view is gone, the tables and the verdict remain
    end = seen.last
    assert "last 10 s" not in end and "[2/2]" not in end
    for line in ("step 0 · concurrency 2", "step 1 · concurrency 4", f"results: {out}"):
        assert line in end.splitlines(), end
    assert re.search(r"^  TTFT +[\d.]+ +[\d.]+", end, re.M)
    assert re.search(r"^verdict: ", end, re.M)


def test_with_workers_the_view_counts_what_they_report(tmp_path: Path) -> None:
    """Records reach the parent's view as they reach the summary; in flight and health
    come from each worker's pulse (the L frames)."""
    out = tmp_path / "out"
    cmd = loadgen("run", scenario(tmp_path), "--out", out, "--workers", "2")
    seen = run_in_pty(cmd, env=plain_env())
    assert seen.code == 0, seen.last
    counts = [
        int(m.group(1))
        for f in seen.frames
        if (m := re.search(r"^requests (\d+)/60 done · 0 failed · [1-4] in flight", f, re.M))
    ]
    assert counts and max(counts) > 0  # "in flight" is shown only once a pulse came
    assert any(
        re.search(r"^loadgen  CPU \d+% · loop lag p99 \d+\.\d ms$", f, re.M) for f in seen.frames
    )
    assert "step 1 · concurrency 4" in seen.last.splitlines()


def test_no_live_on_a_terminal_is_todays_progress_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen = run_in_pty(
        loadgen("run", scenario(tmp_path), "--out", out, "--no-live"), env=plain_env()
    )
    assert seen.code == 0, seen.last
    assert not any("last 10 s" in f or "in flight" in f for f in seen.frames)
    assert any(re.search(r"^\[1/2\] concurrency 2 · \d+/60 req", f, re.M) for f in seen.frames)
    assert "step 1 · concurrency 4" in seen.last.splitlines()


def test_off_a_terminal_there_is_no_view_and_no_escape_codes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        loadgen("run", scenario(tmp_path), "--out", out),
        env=plain_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout + done.stderr
    assert "last 10 s" not in done.stdout and "in flight" not in done.stdout
    lines = done.stdout.splitlines()
    assert "step 0 · concurrency 2" in lines and "step 1 · concurrency 4" in lines
    assert lines[-1] == f"results: {out}"
