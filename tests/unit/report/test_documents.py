from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadgen.errors import ScenarioError
from loadgen.records import Record
from loadgen.report.documents.markdown import FAIL, PASS, Table, build_document, render_markdown
from loadgen.report.documents.writer import write_reports
from loadgen.summary import Summary


def test_markdown_has_verdict_sla_marks_and_warnings(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = run_data
    md = render_markdown(build_document(summary, None, {"curve": "plots/latency_throughput.png"}))
    assert "**max concurrency meeting the SLA: 4; goodput there: 9.5 req/s**" in md
    assert "![curve](plots/latency_throughput.png)" in md
    assert "SLA: TTFT p50 ≤ 50 ms; TPOT p50 ≤ 10 ms; error rate ≤ 10.00%" in md
    # step 2: TTFT p50 69.50 against 50 -> margin -19.50 ms, missed; TPOT met
    assert f"| TTFT p50 | ≤ 50 ms | 69.50 ms | -19.50 ms (-39%) | {FAIL} |" in md
    assert f"| TPOT p50 | ≤ 10 ms | 4.00 ms | +6.00 ms (+60%) | {PASS} |" in md
    assert "### Step 2 · concurrency 16 — SLA missed" in md
    assert "SLA missed: ttft_ms.p50 69.5 > 50 (interval from" in md
    assert "- ⚠ the load generator was saturated" in md
    assert "- ⚠ client: loadgen CPU 97% of a core" in md
    assert "- ⚠ no successful request: no latency values" in md
    assert "- ⚠ errors: http_503 × 5" in md
    assert "cost: 2 USD per hour; 5 USD per million output tokens" in md
    assert "telemetry: GPU util mean 40%, max 55%, memory peak 8.0 GiB, power mean 150 W" in md


def test_overview_table_marks_every_step(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    blocks = build_document(summary)
    overview = next(b for b in blocks if isinstance(b, Table) and b.header[0] == "step")
    assert [row[-1] for row in overview.rows] == [PASS, PASS, FAIL, FAIL]
    assert overview.rows[3][2] == "0 / 5" and overview.rows[3][8] == "–"


def test_little_flag_and_missing_verdict(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    summary.verdict = None
    step = summary.steps[1]
    assert step.little is None or not step.little.flagged
    from loadgen.summary import LittleCheck

    step.little = LittleCheck(mean_in_flight=4.0, predicted=2.0, ratio=2.0, flagged=True)
    md = render_markdown(build_document(summary))
    assert (
        "Little's law off: 4.0 in flight sampled vs 2.0 from throughput × latency (ratio 2.00)"
        in md
    )
    # the report decides no verdict of its own (issue #33): it says there is none
    assert "summary.json holds no verdict" in md and "meeting the SLA" not in md


def test_write_reports_writes_everything_self_contained(results_dir: Path) -> None:
    written = write_reports(results_dir)
    names = sorted(p.relative_to(results_dir).as_posix() for p in written)
    assert names == [
        "plots/latency_cdf.png", "plots/latency_throughput.png", "plots/telemetry.png",
        "plots/throughput.png", "plots/timeline.png", "report.html", "report.md", "steps.csv",
    ]  # fmt: skip
    md = (results_dir / "report.md").read_text()
    for name in ("latency_throughput", "telemetry", "throughput", "latency_cdf", "timeline"):
        assert f"(plots/{name}.png)" in md
    assert "per step: 20 requests, 0 warm-up requests" in md
    page = (results_dir / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script" not in page and "<link" not in page
    srcs = re.findall(r'<img src="([^"]+)"', page)
    assert len(srcs) == 5 and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "<td class=fail>✘ missed</td>" in page
    assert "max concurrency meeting the SLA: 4" in page


def test_write_reports_on_a_partial_run(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    """An interrupted run: one step, a torn last record line, no telemetry, no scenario."""
    from .conftest import write_run

    summary, records = run_data
    summary.steps = summary.steps[:1]
    summary.steps[0].interrupted = True
    summary.interrupted = True
    summary.verdict = None
    out = write_run(tmp_path / "partial", summary, records[:20], telemetry=False)
    (out / "scenario.yaml").unlink()
    with (out / "records.jsonl").open("ab") as fh:
        fh.write(b'{"step": 0, "id": 99, "warm')
    written = write_reports(out)
    assert out / "report.html" in written
    md = (out / "report.md").read_text()
    assert "the run was interrupted" in md and "interrupted: this step did not finish" in md


def test_write_reports_only_failed_steps(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    from .conftest import write_run

    summary, records = run_data
    summary.steps = summary.steps[3:]
    out = write_run(
        tmp_path / "dead", summary, [r for r in records if r.step == 3], telemetry=False
    )
    written = {p.name for p in write_reports(out)}
    assert "latency_throughput.png" not in written and "latency_cdf.png" not in written
    assert {"steps.csv", "report.md", "report.html", "throughput.png", "timeline.png"} <= written


def test_bad_results_dirs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not a directory"):
        write_reports(tmp_path / "nope")
    with pytest.raises(ScenarioError, match=r"no summary\.json"):
        write_reports(tmp_path)
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ScenarioError, match="not a loadgen summary") as info:
        write_reports(tmp_path)
    assert "\n" not in str(info.value)


def test_the_report_reads_the_typed_scenario(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    """What report.md says of the scenario comes from the validated scenario.yaml; a file
    that does not validate (another loadgen's) leaves it out instead of failing."""
    from loadgen.results.files import write_resolved_scenario

    from .conftest import SCENARIO, write_run

    summary, records = run_data
    out = write_run(tmp_path / "typed", summary, records, telemetry=False)
    sc = SCENARIO.model_validate(
        {
            **SCENARIO.model_dump(mode="json"),
            "load": {"mode": "trace", "trace": "/data/trace.jsonl", "duration_s": 12.0},
            "cost": {"usd_per_hour": 2.5},
            "telemetry": {"server_metrics": "http://user:pw@10.0.0.1:8000/metrics"},
        }
    )
    write_resolved_scenario(sc, out / "scenario.yaml")
    write_reports(out)
    md = (out / "report.md").read_text()
    assert "- per step: 12.0 s, 0 warm-up requests" in md  # a trace has no warm-up
    assert "- cost basis: 2.5 USD/hour" in md
    assert "- telemetry: http://10.0.0.1:8000/metrics" in md  # userinfo stripped on disk
    (out / "scenario.yaml").write_text("name: old\nload: {mode: concurrency, retired: 1}\n")
    write_reports(out)
    md = (out / "report.md").read_text()
    assert "- per step:" not in md and "cost basis" not in md
    assert "- metrics profile: loadgen" in md
