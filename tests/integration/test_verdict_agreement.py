"""Every output says the run's one verdict (issue #33), against real sockets on 127.0.0.1.

Three runs a user reported, each rendered through every output (the console,
summary.json, report.md, report.html, steps.csv, ``loadgen compare``):

- Ctrl-C in the middle of a step: the cut step is marked interrupted and left
  out, alike in the verdict, every SLA column and the frontier's best point
  (never "SLA met" beside "no concurrency met the SLA").
- No SLA: no output speaks of an SLA being met ("best under the SLA" included);
  the verdict names the highest load run cleanly.
- A port nothing listens on, no SLA: the verdict says no request succeeded,
  not that no load met an SLA.
"""

from __future__ import annotations

import csv
import html
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from loadgen.cli import main
from loadgen.results.files import read_summary
from loadgen.summary import Summary

#: ~85 ms a request (5 ms TTFT, 16 tokens 5 ms apart): long enough steps to cut
MOCK = {"url": "mock", "model": "m", "extra_body": {"ignore_eos": True}}
MOCK_ARGS = ["--ttft-ms", "5", "--itl-ms", "5"]
WORKLOAD = {
    "prompt_tokens": {"dist": "fixed", "value": 16},
    "output_tokens": {"dist": "fixed", "value": 16},
}
#: met by every request of the mock, with confidence once a step has 36 of them
EASY_SLA = {"ttft_ms": {"p90": 2000}, "tpot_ms": {"p90": 2000}}
#: what no output may say of a run without SLA bounds
SLA_WORDS = ("best under the SLA", "met the SLA", "meeting the SLA", "SLA met")


def write(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(*args: str | Path) -> int:
    """``loadgen ARGS`` in this process; its exit code."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def flat(text: str) -> str:
    """Whitespace runs as one space: a wrapped console line reads as one sentence."""
    return " ".join(text.split())


class _Tables(HTMLParser):
    """Each ``<table>`` of a page as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append(flat("".join(self._cell)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@dataclass
class Outputs:
    """What each output of one results directory says."""

    summary: Summary
    console: str
    md: str
    html: str  # the page's text, tags dropped
    html_tables: list[list[list[str]]]
    csv_rows: list[dict[str, str]]
    compare: str

    def every_text(self) -> dict[str, str]:
        verdict = self.summary.verdict.text if self.summary.verdict is not None else ""
        return {
            "console": self.console,
            "summary.json verdict": verdict,
            "report.md": self.md,
            "report.html": self.html,
            "compare": self.compare,
        }


def outputs(out: Path, console: str, capsys: pytest.CaptureFixture[str]) -> Outputs:
    capsys.readouterr()
    cmp_dir = out.parent / f"{out.name}-compare"
    assert cli("compare", out, out, "--out", cmp_dir) == 0
    compare = capsys.readouterr().out
    page = (out / "report.html").read_text()
    parser = _Tables()
    parser.feed(page)
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(style|script).*?</\1>", "", page)))
    with (out / "steps.csv").open() as f:
        rows = list(csv.DictReader(f))
    return Outputs(
        summary=read_summary(out / "summary.json"),
        console=console,
        md=(out / "report.md").read_text(),
        html=text,
        html_tables=parser.tables,
        csv_rows=rows,
        compare=compare,
    )


def md_sla_cells(md: str) -> dict[int, str]:
    """The overview table's SLA column (its last), by step index."""
    part = md.split("## Steps at a glance", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in part.splitlines() if re.match(r"\| \d+ \|", line)]
    return {int(cells[1]): cells[-2].strip() for cells in (r.split("|") for r in rows)}


def html_sla_cells(tables: list[list[list[str]]]) -> dict[int, str]:
    """The overview table's SLA column in report.html, by step index."""
    overview = next(t for t in tables if t and t[0][:2] == ["step", "load"] and t[0][-1] == "SLA")
    return {int(row[0]): row[-1] for row in overview[1:]}


def best_named(text: str) -> list[str]:
    """The loads named as the best point under the SLA: ``c=16`` of each such line."""
    return re.findall(r"best under the SLA: (\S+)", text)


def assert_agree(o: Outputs, *, sla_set: bool) -> None:
    """The one verdict in every output; each step's SLA standing alike in every table;
    with ``sla_set`` the same best point under the SLA, else no word of an SLA met."""
    v = o.summary.verdict
    assert v is not None and v.text
    for name, text in o.every_text().items():
        if name != "compare":  # compare shows runs side by side, not each one's verdict
            assert flat(v.text) in flat(text), (name, v.text)
    left_out = {s.index for s in o.summary.steps if s.interrupted}
    md, page = md_sla_cells(o.md), html_sla_cells(o.html_tables)
    for step in o.summary.steps:
        i, row = step.index, o.csv_rows[step.index]
        if i in left_out:
            assert md[i] == page[i] and "interrupted" in md[i], (md[i], page[i])
            assert row["sla_verdict"] == "interrupted"
            block = o.console.split(f"step {i} ·", 1)[1].split("\nstep ", 1)[0]
            assert "INTERRUPTED" in block and "SLA met" not in block and "SLA missed" not in block
        else:
            assert md[i] == page[i] and "interrupted" not in md[i]
            assert row["sla_verdict"] == (step.sla.verdict or "")
    if sla_set:
        named = {*best_named(o.md), *best_named(o.html), *best_named(o.compare)}
        assert len(named) <= 1, named  # the same best point in every output
        judged = {f"c={s.load.concurrency}" for s in o.summary.steps if s.meets_sla}
        assert named <= judged | {"none"}, (named, judged)
    else:
        for name, text in o.every_text().items():
            for words in SLA_WORDS:
                assert words not in text, (name, words)
    assert v.sla_set == sla_set and set(v.interrupted_steps) == left_out


@pytest.mark.parametrize("cut", [0, 1])
def test_a_step_cut_by_ctrl_c_is_left_out_alike_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: int
) -> None:
    """Cut in step 0 (the report's case: the only step, met so far) or in step 1 (after
    a step that finished and met the SLA)."""
    concurrency = [1, 4] if cut == 0 else [4, 1]  # the cut step is the slow one
    doc = {
        "name": "cut",
        "target": {**MOCK, "mock": {"args": MOCK_ARGS}},
        "workload": WORKLOAD,
        "load": {"concurrency": concurrency, "requests_per_step": 200, "warmup_requests": 2},
        "sla": EASY_SLA,
    }
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "run", str(write(tmp_path, doc)), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        if cut == 0:  # 40-odd requests in: step 0 would be met with confidence
            rec = out / "records.jsonl"
            while time.monotonic() < deadline and not (rec.exists() and rec.stat().st_size):
                time.sleep(0.05)
            time.sleep(4.0)
        else:  # step 0 is in summary.json: step 1 is under way
            path = out / "summary.json"
            while time.monotonic() < deadline and not (
                path.exists() and '"index":0' in path.read_text().replace(" ", "")
            ):
                time.sleep(0.05)
            time.sleep(4.0)
        proc.send_signal(signal.SIGINT)
        console, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    o = outputs(out, console, capsys)
    assert [s.index for s in o.summary.steps if s.interrupted] == [cut]
    assert o.summary.steps[cut].requests.ok >= 36  # enough to have been judged met
    assert_agree(o, sla_set=True)
    v = o.summary.verdict
    assert v is not None and v.interrupted_steps == [cut]
    assert "interrupted" in v.text
    if cut == 0:  # nothing judged: the verdict does not claim a load missed
        assert v.max_passing is None and "no concurrency met the SLA" not in v.text
    else:  # the finished step is the answer, the cut one is no one's best
        assert v.max_passing == 4
        assert set(best_named(o.md)) == {"c=4"}


def test_a_run_without_an_sla_never_speaks_of_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {
        "name": "no-sla",
        "target": {**MOCK, "mock": {"args": MOCK_ARGS}},
        "workload": WORKLOAD,
        "load": {"concurrency": [1, 8], "requests_per_step": 24, "warmup_requests": 0},
    }
    out = tmp_path / "out"
    assert cli("run", write(tmp_path, doc), "--out", out) == 0
    o = outputs(out, capsys.readouterr().out, capsys)
    assert_agree(o, sla_set=False)
    v = o.summary.verdict
    assert v is not None and v.max_passing == 8
    assert "highest concurrency run cleanly: 8" in v.text


def test_a_port_nothing_listens_on_without_an_sla(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {
        "name": "down",
        "target": {"url": f"http://127.0.0.1:{closed_port()}", "model": "m"},
        "load": {"concurrency": [1, 4], "requests_per_step": 50},
    }
    out = tmp_path / "out"
    assert cli("run", write(tmp_path, doc), "--out", out) == 3
    o = outputs(out, capsys.readouterr().out, capsys)
    assert_agree(o, sla_set=False)
    v = o.summary.verdict
    assert v is not None and v.max_passing is None
    assert "no concurrency completed a request" in v.text
