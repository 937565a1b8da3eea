"""Take the README's picture of the live view: docs/img/live-view.png, from a real run.

Starts a fake-GPU agent, runs ``loadgen run`` against the built-in mock
(its /metrics and the agent as telemetry) under a pseudo-terminal, and feeds
what it draws to a terminal emulator (pyte, the test extra). Partway through
the last step, the screen's last lines (the previous step's table and the
live view under it) are taken with their colours, drawn again by rich as SVG
(``Console(record=True).save_svg``) and turned into a PNG by headless
Chromium. Independent of the tests; needs pyte and a Chromium.

    python scripts/live_screenshot.py [--out docs/img/live-view.png] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

import pyte
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
COLS, ROWS = 88, 70

SCENARIO = """
name: live-demo
target: {{url: mock, api: openai-chat, model: demo-model, extra_body: {{ignore_eos: true}}}}
workload:
  prompt_tokens: {{dist: uniform, min: 64, max: 256}}
  output_tokens: {{dist: uniform, min: 16, max: 48}}
load: {{mode: concurrency, concurrency: [4, 16, 24], requests_per_step: 300}}
sla: {{ttft_ms: {{p50: 150, p99: 400}}, itl_ms: {{p99: 60}}, e2e_ms: {{p99: 1500}}}}
telemetry: {{server_metrics: target, agents: ['{agent}'], interval_s: 0.5}}
"""


def start_agent() -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "loadgen.gpu_agent", "--port", "0", "--fake-nvml", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("loadgen-agent listening on "):
        proc.kill()
        raise SystemExit(f"the agent did not start: {line!r}")
    return proc, line.strip().rsplit(" ", 1)[1]


def wanted(screen: pyte.Screen) -> bool:
    """Partway through the last step, with every part of the view drawn."""
    text = "\n".join(screen.display)
    return (
        re.search(r"^\[3/3\] concurrency 24 · step \d+ s left", text, re.M) is not None
        and re.search(r"^requests (1[2-9]\d|2\d\d)/300 done", text, re.M) is not None
        and "GPU 0" in text
        and "server " in text
    )


def capture(scenario: Path, out_dir: Path) -> list[list[Any]]:
    """The screen's rows (pyte chars) at the wanted moment; the run is then let to finish."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    cmd = [sys.executable, "-m", "loadgen", "run", str(scenario), "--out", str(out_dir)]
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.ByteStream(screen)
    taken: list[list[Any]] | None = None
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            stream.feed(data)
            if taken is None and wanted(screen):
                taken = [[screen.buffer[y][x] for x in range(COLS)] for y in range(ROWS)]
        proc.wait(timeout=60)
    finally:
        os.close(master)
    if taken is None:
        raise SystemExit("the run ended before the view showed every part")
    return taken


def style_of(char: Any) -> str:
    parts = ["bold"] if char.bold else []
    fg = {"brown": "yellow", "default": ""}.get(char.fg, char.fg)
    if re.fullmatch(r"[0-9a-fA-F]{6}", fg):
        fg = f"#{fg}"
    return " ".join([*parts, fg]).strip()


def to_text(rows: list[list[Any]]) -> Text:
    """From the last step table's first line to the view's last line."""
    lines = ["".join(c.data for c in row).rstrip() for row in rows]
    last = max(i for i, line in enumerate(lines) if line)
    first = max(i for i, line in enumerate(lines) if line.startswith("step "))
    text = Text()
    for y in range(first, last + 1):
        row = rows[y]
        for x in range(len(lines[y])):
            text.append(row[x].data, style=style_of(row[x]) or None)
        text.append("\n")
    text.rstrip()
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "live-view.png")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    agent, agent_url = start_agent()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scenario = Path(tmp) / "live-demo.yaml"
            scenario.write_text(SCENARIO.format(agent=agent_url))
            rows = capture(scenario, Path(tmp) / "results")
            console = Console(record=True, width=COLS, file=open(os.devnull, "w"))  # noqa: SIM115
            console.print(to_text(rows))
            svg = Path(tmp) / "live-view.svg"
            console.save_svg(str(svg), title="loadgen run: the live view")
            box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text())
            assert box is not None
            width, height = (round(float(v)) for v in box.groups())
            args.out.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    args.chromium,
                    *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"),
                    f"--screenshot={args.out.resolve()}",
                    f"--window-size={width},{height}",
                    svg.as_uri(),
                ],
                check=True,
                capture_output=True,
            )
    finally:
        agent.terminate()
        agent.wait(timeout=10)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
