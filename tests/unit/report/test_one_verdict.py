"""One verdict per step, decided once, and every output says the same.

A run with one step of each kind (met; missed; no successful request;
inconclusive because the bound lies within loadgen's own error of the value
(on a saturated client), because the step is too small for its percentile,
and because the bound sits inside the interval) is
summarised by the real metrics code, judged by the real sweep, and rendered
to the console, summary.json, steps.csv, report.md and report.html; each
output must give each step the verdict ``sla.verdict`` holds, and the reason.
"""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

from pydantic import TypeAdapter

from loadgen.metrics.step import summarize_step
from loadgen.records import Record
from loadgen.report.blocks import verdict_cell
from loadgen.report.documents.html import render_html
from loadgen.report.documents.markdown import build_document, render_markdown
from loadgen.report.plots import load_figures
from loadgen.report.step_table import render_steps_csv
from loadgen.report.terminal.console import format_step
from loadgen.results.sweep import make_sweep, verdict
from loadgen.scenario import LoadSpec, SlaSpec
from loadgen.summary import ClientHealth, ClockAnchor, LoadPoint, StepSummary, Summary

MS = 1_000_000
#: a p90 needs about 36 requests at 95% to be met with no value beyond it
SLA = {"ttft_ms": {"p90": 50.0}, "max_error_rate": 0.5}


def records(step: int, ttfts: list[float], ok: bool = True, slack: float = 0) -> list[Record]:
    """``slack``: each first token shared its read with the next, and may have come that
    many ms before its stamp."""
    out = []
    for j, ttft in enumerate(ttfts):
        sent = step * 100_000 * MS + j * 10 * MS
        first = sent + round(ttft * MS)
        tokens = [first + k * 5 * MS for k in range(4)]
        if not ok:
            out.append(
                Record(
                    step=step, id=j, warmup=False, request_id=f"{step}-{j}",
                    prompt_tokens_requested=16, max_tokens=4, sent_ns=sent, end_ns=sent + MS,
                    error_kind="connect_error",
                )
            )  # fmt: skip
            continue
        out.append(
            Record(
                step=step, id=j, warmup=False, request_id=f"{step}-{j}",
                prompt_tokens_requested=16, max_tokens=4, sent_ns=sent, headers_ns=sent,
                first_token_ns=first, last_token_ns=tokens[-1], end_ns=tokens[-1] + MS,
                token_ns=tokens, output_events=4, output_tokens_server=4, ok=True,
                finish_reason="length", token_slack_ns=[round(slack * MS)] if slack else None,
            )
        )  # fmt: skip
    return out


def low(n: int) -> list[float]:
    return [10.0 + 10.0 * j / n for j in range(n)]


#: concurrency -> (what the step is, its TTFTs, ok, loadgen saturated, first tokens' slack)
KINDS = {
    1: ("met", low(60), True, False, 0.0),
    2: ("few_requests", low(9), True, False, 0.0),
    # exactly 10% of 400 beyond 50 ms: the p90 sits on the bound, no sample decides it
    4: ("close_call", [40.0 + 9.0 * j / 360 for j in range(360)] + [60.0] * 40, True, False, 0),
    # a busy client: every first token may have come 5 ms early, and the p90 is 52-53
    8: ("client_error", [52.0 + j / 60 for j in range(60)], True, True, 5.0),
    16: ("missed", [80.0 + j for j in range(30)], True, False, 0.0),
    32: ("no_success", [0.0] * 5, False, False, 0.0),
}
VERDICT = {
    "met": "met",
    "few_requests": "inconclusive",
    "close_call": "inconclusive",
    "client_error": "inconclusive",
    "missed": "missed",
    "no_success": "missed",
}


def run() -> Summary:
    sla = SlaSpec.model_validate(SLA)
    load = TypeAdapter(LoadSpec).validate_python(
        {"mode": "concurrency", "concurrency": list(KINDS), "requests_per_step": 10}
    )
    sweep = make_sweep(load)
    steps: list[StepSummary] = []
    while (p := sweep.next_point()) is not None:
        _, ttfts, ok, saturated, slack = KINDS[int(p.value)]
        i = len(steps)
        client = ClientHealth(saturated=saturated, warnings=["CPU 99%"] if saturated else [])
        step = summarize_step(
            i,
            LoadPoint(mode="concurrency", concurrency=int(p.value)),
            records(i, ttfts, ok, slack),
            sla,
            client=client,
        )
        sweep.observe(p, step)
        steps.append(step)
    return Summary(
        loadgen_version="0",
        name="kinds",
        run_id="r",
        target_url="mock",
        api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0),
        steps=steps,
        sla=SLA,
        verdict=verdict(sweep),
    )


def test_each_kind_of_step_gets_its_verdict_and_cause() -> None:
    summary = run()
    got = {s.load.concurrency: (s.sla.verdict, s.sla.cause) for s in summary.steps}
    assert got == {c: (VERDICT[kind], kind) for c, (kind, *_) in KINDS.items()}
    few = summary.steps[1].sla
    assert few.reason == "ttft_ms.p90: 9 requests cannot decide a p90 at 95%; about 36 would"
    assert summary.steps[0].sla.reason == "every bound met (2 checked)"
    assert summary.steps[4].sla.reason is not None
    assert summary.steps[4].sla.reason.startswith("ttft_ms.p90 ")
    assert summary.steps[5].sla.reason == "no successful request"


def test_every_output_renders_the_one_verdict(tmp_path: Path) -> None:
    summary = run()
    assert summary.verdict is not None
    inconclusive = [s.index for s in summary.steps if s.sla.verdict == "inconclusive"]
    assert summary.verdict.inconclusive_steps == inconclusive == [1, 2, 3]
    assert summary.verdict.max_passing == 1
    assert summary.verdict.text.startswith("max concurrency meeting the SLA: 1 (95% confidence)")
    assert "steps 1 (too few requests" not in summary.verdict.text
    assert "step 1 (too few requests: about 36 per step would decide)" in summary.verdict.text
    assert "step 3 (a bound within loadgen's own error of the value)" in summary.verdict.text

    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    doc = build_document(summary)
    md = render_markdown(doc)
    page = render_html(doc, tmp_path)
    overview = {
        line.split("|")[1].strip(): line.rstrip(" |").rsplit("|", 1)[-1].strip()
        for line in md.splitlines()
        if re.match(r"\| \d+ \| concurrency", line)
    }
    for step, row in zip(summary.steps, rows, strict=True):
        v, reason = step.sla.verdict, step.sla.reason
        assert v is not None and reason is not None
        console = format_step(step)
        assert f"  SLA {v}: " in console, console
        for other in {"met", "missed", "inconclusive"} - {v}:
            assert f"SLA {other}" not in console
        assert (row["sla_verdict"], row["sla_reason"]) == (v, reason)
        assert overview[str(step.index)] == verdict_cell(v)
        heading = f"Step {step.index} · concurrency {step.load.concurrency} — SLA {v}"
        assert f"### {heading}" in md
        assert f"SLA {v}: {reason}" in md
        assert heading in page and f"SLA {v}: {reason}" in html.unescape(page)
    # no output says pass or fail by the point estimate
    for text in (md, page, *(format_step(s) for s in summary.steps)):
        assert "PASS" not in text and "✔ pass" not in text and "FAIL" not in text


def test_the_console_says_why_a_step_cannot_be_decided() -> None:
    few = run().steps[1]
    text = " ".join(format_step(few).split())  # lines wrap at 80 columns
    assert "ttft_ms.p90 " in text and " <= 50 unsure" in text
    assert "  p90 95% CI  TTFT ≥ " in format_step(few)  # the interval of the bound's percentile
    assert "unsure: ttft_ms.p90 <= 50: 9 requests cannot decide a p90 at 95%; about 36" in text
    busy = " ".join(format_step(run().steps[3]).split())
    assert "unsure: ttft_ms.p90 <= 50: loadgen's readings may be up to 5 ms late here" in busy
    assert "warning: CPU 99%" in busy  # saturation: a warning beside the verdict


def test_a_mean_bound_shows_the_means_interval() -> None:
    step = summarize_step(
        0,
        LoadPoint(mode="concurrency", concurrency=1),
        records(0, [2.0, 3.0, 43.0]),
        SlaSpec.model_validate({"ttft_ms": {"mean": 0.0001}}),
    )
    assert step.sla.verdict == "missed"  # every TTFT is over 1,000x the bound
    ci = step.ttft_ms.ci
    assert ci is not None and ci.mean[0] is not None and ci.mean[1] is not None
    line = next(x for x in format_step(step).splitlines() if "95% CI" in x)
    assert line.startswith(f"  mean 95% CI TTFT {ci.mean[0]:.2f}-{ci.mean[1]:.2f} · ")
    assert ci.mean[0] > 0  # a duration's mean: never a negative end


def test_the_interval_line_names_any_confidence_and_statistic() -> None:
    step = summarize_step(
        0,
        LoadPoint(mode="concurrency", concurrency=1),
        records(0, low(3000)),
        SlaSpec.model_validate({"ttft_ms": {"p99": 50.0}, "confidence": 0.999}),
    )
    assert step.sla.verdict == "met"
    line = next(x for x in format_step(step).splitlines() if " CI " in x)
    assert line.startswith("  p99 99.9% CI TTFT ")  # not "100%", not "CITTFT"


def test_the_tail_shown_is_the_percentile_the_sla_bounds() -> None:
    """A p90 bound: the overview's column, the curve's line and its SLA line are p90's."""
    from loadgen.report.blocks import Table
    from loadgen.report.plots import series as plots

    summary = run()
    overview = next(b for b in build_document(summary) if isinstance(b, Table))
    assert "TTFT p90 (ms)" in overview.header and "TTFT p99 (ms)" not in overview.header
    assert "TPOT p99 (ms)" in overview.header  # no TPOT bound: the p99
    assert plots.tail_stat(summary, "ttft_ms") == "p90"
    assert {"TTFT p50", "TTFT p90"} <= set(plots.curve_series(summary))
    ax = load_figures.draw_curve(summary).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert "TTFT p90" in labels and "SLA TTFT p90 ≤ 50 ms" in labels
