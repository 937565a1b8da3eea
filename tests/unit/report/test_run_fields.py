"""Every output shows the workload, prompt-length source and the per-step figures of
sessions, reasoning, ramp-up, prefix caching, prompt lengths, short outputs and traces;
a plain run shows none of them."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from loadgen.records import Record
from loadgen.report import facts
from loadgen.report.documents.markdown import (
    OVERVIEW_HEADER,
    PREFIX_COLUMN,
    Table,
    build_document,
    render_markdown,
)
from loadgen.report.documents.writer import write_reports
from loadgen.report.sessions import CSV_FIELDS as SESSION_COLUMNS
from loadgen.report.step_table import BASE_COLUMNS, render_steps_csv
from loadgen.report.terminal.console import format_run_header, format_step
from loadgen.results.steps import load_label
from loadgen.scenario.workload_spec import WorkloadSpec
from loadgen.summary import StepSummary, Summary, TokenCounts

from .conftest import RICH_N, SCENARIO, write_run

#: Text that only the new fields produce: none of it may appear for a plain run.
NEW_TEXT = (
    "prompt lengths:",
    "planned vs server",
    "ramp-up",
    "prefix cache",
    "TTFT(rsn)",
    "TTFT(ans)",
    "TTFT reasoning",
    "TTFT answer",
    "TTFT by turn",
    "trace",
    "sessions:",
    "max_tokens",
)
NEW_COLUMNS = (
    "time_scale",
    "requests_ramp",
    "ttft_reasoning_ms_p50",
    "ttft_reasoning_ms_p99",
    "ttft_answer_ms_p50",
    "ttft_answer_ms_p99",
    "prefix_cache_hit_rate",
    "prompt_len_mean_rel_diff",
    "prompt_len_worst_rel_diff",
    "prompt_len_beyond_tolerance",
    "short_outputs",
)
#: loadgen's own error beside every run's metrics (loadgen.report.client_error)
ERROR_COLUMNS = tuple(
    f"{m}_error_ms_{s}" for m in ("ttft", "itl", "tpot", "e2e") for s in ("p99", "max")
)
PROMPT_LINE = "prompt tokens: planned vs server +2.0% mean (worst +4.0%), 8 of 20 beyond ±2%"
SHORT_WARNING = "5 of 20 requests ended before max_tokens"


# --- console ---------------------------------------------------------------------------


def test_console_header_says_where_prompt_lengths_come_from(
    rich_data: tuple[Summary, list[Record]], run_data: tuple[Summary, list[Record]]
) -> None:
    rich, _ = rich_data
    lines = format_run_header(rich).splitlines()
    assert lines == [
        "run rich · openai-chat m at mock",
        "  prompt lengths: approximate (a words-per-token guess: no tokenizer,",
        "    no calibration)",
        "  prompt tokens: fixed 100",
        "  output tokens: fixed 5",
        "  shared prefix: 64 tokens, 4 groups",
        "  sessions: turns fixed 3, think time exponential mean 2 s",
    ]
    assert max(map(len, lines)) <= 80  # the header wraps as the step blocks do
    plain, _ = run_data
    assert format_run_header(plain) == "run unit · openai-chat m at mock"


def test_console_step_shows_the_new_figures(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    step = summary.steps[0]
    text = format_step(step, "approximate")
    lines = text.splitlines()
    assert lines[1].startswith("  requests  20 ok, 0 failed, 0 warm-up, 2 ramp-up · window")
    rows = {line.split()[0]: line.split()[1:] for line in lines[4:9]}
    assert rows["TTFT(rsn)"][1] == f"{step.ttft_reasoning_ms.p50:.2f}"  # type: ignore[union-attr]
    assert rows["TTFT(ans)"][1] == "49.50" and rows["TTFT(ans)"][4] == "58.81"
    assert "  prefix cache hit 62.5% of 8,000 prompt tokens" in lines
    assert f"  {PROMPT_LINE}" in lines
    assert sum(SHORT_WARNING in line for line in lines) == 1  # the metrics' line, not twice
    assert any(line.startswith(f"  warning: {SHORT_WARNING}") for line in lines)


def test_console_prompt_line_when_it_matters(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    step = summary.steps[0]
    # exact source: shown because 8 requests are beyond tolerance
    assert PROMPT_LINE in format_step(step, "tokenizer")
    within = step.model_copy(deep=True)
    within.prompt_lengths.beyond_tolerance = 0
    # exact source, nothing beyond tolerance: nothing to say
    assert "prompt tokens:" not in format_step(within, "tokenizer")
    assert "prompt tokens:" not in format_step(within)
    # approximate: always shown while the server counted prompts
    shown = format_step(within, "approximate")
    assert "  prompt tokens: planned vs server +2.0% mean (worst +4.0%)\n" in shown


def test_console_trace_step(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    trace = summary.steps[1]
    text = format_step(trace, "approximate")
    assert text.splitlines()[0] == "step 1 · trace x0.5"
    assert "  warning: 12 trace rows beyond the window were not replayed" in text.splitlines()
    capped = trace.model_copy(update={"load": trace.load.model_copy(update={"max_concurrency": 8})})
    assert load_label(capped) == "trace x0.5 (max 8 in flight)"


def test_console_plain_step_shows_none_of_it(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    for step in summary.steps:
        text = format_step(step, summary.prompt_length_source)
        assert not [t for t in NEW_TEXT if t in text], text


def test_short_output_line_when_the_summary_has_no_warning() -> None:
    """A summary built elsewhere, with the counts but not the metrics' warning line."""
    from loadgen.summary import LoadPoint, RequestCounts

    step = StepSummary(
        index=0,
        load=LoadPoint(mode="concurrency", concurrency=2),
        requests=RequestCounts(total=10, ok=10),
        tokens=TokenCounts(short_outputs=3, full_output_expected=True),
    )
    expected = "3 of 10 outputs ended before max_tokens although the request body forces full"
    assert facts.step_warnings(step)[0].startswith(expected)
    assert f"  warning: {expected}" in format_step(step)
    not_forced = step.model_copy(update={"tokens": TokenCounts(short_outputs=3)})
    assert facts.step_warnings(not_forced) == []


def test_ttft_of_answer_is_said(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    step = summary.steps[0].model_copy(update={"ttft_of": "answer"})
    assert "  TTFT to the first answer token (sla.ttft_of: answer)" in format_step(step)


# --- steps.csv -------------------------------------------------------------------------


def _header(summary: Summary) -> list[str]:
    return render_steps_csv(summary).splitlines()[0].split(",")


def test_csv_new_columns_follow_the_base_columns(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = rich_data
    header = _header(summary)
    assert header[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)
    # no cost, telemetry, ttft_of; the records have sessions: their columns last
    assert header[len(BASE_COLUMNS) :] == [*NEW_COLUMNS, *ERROR_COLUMNS, *SESSION_COLUMNS]
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    s0, s1 = summary.steps
    assert [r["load_mode"] for r in rows] == ["concurrency", "trace"]
    assert [r["load_value"] for r in rows] == ["4.0", "0.5"]
    assert [r["time_scale"] for r in rows] == ["", "0.5"]
    assert [r["requests_ramp"] for r in rows] == ["2", "2"]
    assert float(rows[0]["ttft_answer_ms_p99"]) == 58.81
    assert float(rows[0]["ttft_reasoning_ms_p50"]) == s0.ttft_reasoning_ms.p50  # type: ignore[union-attr]
    assert [r["prefix_cache_hit_rate"] for r in rows] == ["0.625", ""]
    assert float(rows[0]["prompt_len_mean_rel_diff"]) == pytest.approx(0.02)
    assert float(rows[0]["prompt_len_worst_rel_diff"]) == 0.04
    assert rows[0]["prompt_len_beyond_tolerance"] == "8"
    assert [r["short_outputs"] for r in rows] == ["5", str(s1.tokens.short_outputs)]


def test_csv_ttft_of_column_only_when_a_step_measures_to_the_answer(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = rich_data
    summary.steps[1].ttft_of = "answer"
    header = _header(summary)
    assert header[header.index("requests_ramp") + 1] == "ttft_of"
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    assert [r["ttft_of"] for r in rows] == ["any", "answer"]


def test_csv_plain_run_has_no_new_column(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    header = _header(summary)
    assert not set(header) & {*NEW_COLUMNS, "ttft_of"}
    assert all(
        h in BASE_COLUMNS or h in ERROR_COLUMNS or h.startswith(("cost_", "telemetry_"))
        for h in header
    )


def test_csv_new_columns_read_typed_in_pandas(rich_data: tuple[Summary, list[Record]]) -> None:
    pd = pytest.importorskip("pandas")
    summary, _ = rich_data
    summary.steps[1].prompt_lengths = type(summary.steps[1].prompt_lengths)()  # none compared
    df = pd.read_csv(io.StringIO(render_steps_csv(summary)))
    for column in ("requests_ramp", "short_outputs", "prompt_len_beyond_tolerance"):
        assert df[column].dtype == "int64", column
    for column in ("time_scale", "prefix_cache_hit_rate", "prompt_len_mean_rel_diff"):
        assert df[column].dtype == "float64", column
    assert df["time_scale"].isna().tolist() == [True, False]
    assert df["prompt_len_mean_rel_diff"].isna().tolist() == [False, True]
    assert df["prompt_len_beyond_tolerance"].tolist() == [8, 0]


# --- report.md / report.html -----------------------------------------------------------


def test_markdown_header_overview_and_step_sections(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = rich_data
    blocks = build_document(summary)
    md = render_markdown(blocks)
    assert (
        "- prompt lengths: approximate (a words-per-token guess: no tokenizer, no calibration)"
        in md
    )
    assert "- sessions: turns fixed 3, think time exponential mean 2 s" in md
    assert "- shared prefix: 64 tokens, 4 groups" in md
    assert "steps run: 2 (concurrency 4; trace x0.5)" in md
    overview = next(b for b in blocks if isinstance(b, Table) and b.header[0] == "step")
    at = overview.header.index(PREFIX_COLUMN)
    assert overview.header[at - 1] == "TTFT p99 (ms)"
    assert [row[at] for row in overview.rows] == ["62.5", "–"]
    assert [row[1] for row in overview.rows] == ["concurrency 4", "trace x0.5"]
    assert "- 20 ok, 0 failed, 0 warm-up, 2 ramp-up over" in md
    assert "- prefix cache hit 62.5% of 8,000 prompt tokens" in md
    assert f"- {PROMPT_LINE}" in md
    assert "| TTFT answer | 20 | 49.50 | 49.50 |" in md
    assert "| TTFT reasoning | 20 |" in md
    assert "| TTFT by turn (ms) | count | mean | p50 | p90 | p95 | p99 | p99.9 | max |" in md
    assert "| turn 0 | 7 | 8.00 | 8.00 |" in md
    assert "| turn 2 | 6 |" in md and "| turn 3 |" not in md
    assert md.count("TTFT by turn (ms)") == 1  # the trace step ran no sessions
    assert f"- ⚠ {SHORT_WARNING}" in md and md.count(SHORT_WARNING) == 1
    assert "- ⚠ 12 trace rows beyond the window were not replayed" in md
    assert "### Step 1 · trace x0.5 — SLA" in md


def test_markdown_plain_run_shows_none_of_it(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    blocks = build_document(summary)
    md = render_markdown(blocks)
    assert not [t for t in NEW_TEXT if t in md]
    overview = next(b for b in blocks if isinstance(b, Table) and b.header[0] == "step")
    assert overview.header == OVERVIEW_HEADER


def test_markdown_without_a_workload_keeps_the_scenario_lengths(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = rich_data
    work = {"prompt_tokens": {"dist": "fixed", "value": 100}}
    scenario = SCENARIO.model_copy(update={"workload": WorkloadSpec.model_validate(work)})
    md = render_markdown(build_document(summary, scenario))
    assert "prompt tokens: dist fixed" not in md  # the runner's description is used instead
    summary.workload = None
    summary.prompt_length_source = "tokenizer"
    md = render_markdown(build_document(summary, scenario))
    assert "- prompt tokens: dist fixed, value 100" in md
    assert "- prompt lengths: tokenizer (counted with the model's tokenizer: exact)" in md


def test_reports_on_disk(tmp_path: Path, rich_data: tuple[Summary, list[Record]]) -> None:
    summary, records = rich_data
    out = write_run(tmp_path / "rich", summary, records, telemetry=False)
    written = {p.relative_to(out).as_posix() for p in write_reports(out)}
    assert "plots/ttft_by_turn.png" in written
    md = (out / "report.md").read_text()
    assert "![turns](plots/ttft_by_turn.png)" in md
    page = (out / "report.html").read_text()
    assert "<th>prefix cache hit (%)</th>" in page
    assert "<td class=t>TTFT answer</td>" in page
    assert "<th>TTFT by turn (ms)</th>" in page
    assert "prompt lengths: approximate (a words-per-token guess" in page
    assert "<li>prefix cache hit 62.5% of 8,000 prompt tokens</li>" in page
    assert "Step 1 · trace x0.5" in page
    steps_csv = (out / "steps.csv").read_text().splitlines()[0]
    assert steps_csv.endswith(",".join((*NEW_COLUMNS, *ERROR_COLUMNS, *SESSION_COLUMNS)))


def test_plain_reports_on_disk_have_none_of_it(results_dir: Path) -> None:
    write_reports(results_dir)
    page = (results_dir / "report.html").read_text()
    md = (results_dir / "report.md").read_text()
    for text in NEW_TEXT:
        assert text not in md and text not in page, text
    assert not (results_dir / "plots" / "ttft_by_turn.png").exists()


def test_rich_run_counts(rich_data: tuple[Summary, list[Record]]) -> None:
    """The fixture is what the assertions above assume."""
    summary, _ = rich_data
    step = summary.steps[0]
    assert step.requests.ok == RICH_N and step.requests.ramp == 2
    assert step.tokens.short_outputs == 5 and step.tokens.full_output_expected
    assert step.prompt_lengths.beyond_tolerance == 8


def test_docs_name_every_optional_column_and_plot() -> None:
    from loadgen.report.plots.figures import PLOT_FILES
    from loadgen.report.step_table import OPTIONAL_COLUMNS

    docs = (Path(__file__).resolve().parents[3] / "docs" / "reports.md").read_text()
    for names, _ in OPTIONAL_COLUMNS:
        for name in names:
            assert f"`{name}`" in docs, name
    for file in PLOT_FILES.values():
        assert f"`{file}`" in docs, file


def test_agent_tasks_are_one_workload_line_and_arrivals_count_sessions(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    from loadgen.summary import WorkloadAgent, WorkloadInfo

    agent = WorkloadAgent(
        calls="fixed 6",
        tool_result_tokens="uniform [100, 400]",
        tool_time_s="exponential mean 0.2",
        max_context_tokens=32000,
        fan_out="after call 1: fixed 2 sub-agents of fixed 3 calls, task message fixed 80 tokens",
    )
    lines = facts.workload_lines(WorkloadInfo(prompt_length_source="approximate", agent=agent))
    assert lines == [
        "agent tasks: calls fixed 6, tool time exponential mean 0.2, tool results uniform "
        "[100, 400] tokens, context at most 32,000 tokens; fan-out after call 1: fixed 2 "
        "sub-agents of fixed 3 calls, task message fixed 80 tokens"
    ]
    summary, _ = rich_data
    step = summary.steps[0]
    rate = step.load.model_copy(update={"mode": "rate", "rate": 2.0, "arrival": "poisson"})
    with_sessions = step.model_copy(update={"load": rate})
    assert with_sessions.sessions is not None
    assert load_label(with_sessions) == "rate 2 sessions/s (poisson)"
    plain = with_sessions.model_copy(update={"sessions": None})
    assert load_label(plain) == "rate 2 req/s (poisson)"
