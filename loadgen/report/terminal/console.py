"""Plain-text tables of step summaries for the terminal.

Owns :func:`format_run_header` (what the run sends, printed once before its
steps), :func:`format_step` (printed after each step, its warnings apart for
stderr) and :func:`format_verdict` (the run's last lines).
"""

from __future__ import annotations

from loadgen.report import facts, validity
from loadgen.report.endpoints import target_text
from loadgen.report.pooling import throughput_parts
from loadgen.report.sections import step_sections
from loadgen.report.spec_decode import spec_mismatch_text
from loadgen.report.wrap import CONSOLE_WIDTH, fit, phrases
from loadgen.results import load_label
from loadgen.summary import Distribution, SlaCheck, StepSummary, Summary
from loadgen.vocab import confidence_text

__all__ = [
    "format_run_header",
    "format_step",
    "format_verdict",
    "interval_text",
    "step_warning_lines",
]


def confidence_lines(step: StepSummary) -> list[str]:
    """The bounds the step's sample cannot decide, and why: ``unsure: ttft_ms.p99 <= 400:
    32 requests cannot decide a p99 at 95%; about 368 would (CI ≥ 312)``; nothing when
    every bound is decided."""
    out = []
    for c in step.sla.checks:
        if c.verdict != "inconclusive" or c.interval is None:
            continue
        ci = interval_text(*c.interval)
        conf = next(
            (
                d.ci.confidence
                for d in (getattr(step, c.metric, None),)
                if d is not None and getattr(d, "ci", None) is not None
            ),
            0.95,
        )
        why = c.reason or f"not decided at {confidence_text(conf)} confidence"
        text = f"unsure: {c.metric}.{c.stat} <= {c.bound:g}: {why} (CI {ci})"
        if c.metric == validity.METRIC:
            text = f"unsure: {validity.check_text(c, '')}: {why} (CI {ci})"
        out += fit("", phrases(text), " ", CONSOLE_WIDTH - 2)  # the step block indents by 2
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _row(name: str, d: Distribution) -> str:
    cells = [d.mean, d.p50, d.p90, d.p95, d.p99, d.max]
    return f"  {name:<10}" + "".join(f"{_fmt(c):>10}" for c in cells)


def _kinds(errors: dict[str, int]) -> str:
    """``3 connect_error, 1 http_500``: most frequent first."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(errors.items(), key=lambda kv: -kv[1]))


def format_run_header(summary: Summary) -> str:
    """``run NAME · api model at URL``, then where prompt lengths come from and the workload.

    Only the first line for a summary that recorded no workload (older files).
    """
    lines = [f"run {summary.name} · {summary.api} {summary.model} at {target_text(summary)}"]
    for line in facts.run_facts(summary):
        lines += fit("  ", phrases(line), " ")
    return "\n".join(lines)


def _latency_rows(step: StepSummary) -> list[str]:
    head = f"  {'ms':<10}" + "".join(
        f"{h:>10}" for h in ("mean", "p50", "p90", "p95", "p99", "max")
    )
    if step.pooling is not None:  # one JSON answer, no tokens: E2E is the latency
        return [head, _row("E2E", step.e2e_ms), *_ci_rows(step)]
    rows = [head, _row("TTFT", step.ttft_ms)]
    extra = (
        ("TTFT(sch)", step.ttft_from_scheduled_ms),
        ("TTFT(rsn)", step.ttft_reasoning_ms),
        ("TTFT(ans)", step.ttft_answer_ms),
    )
    rows += [_row(name, d) for name, d in extra if d is not None]
    rows += [_row("ITL", step.itl_ms), _row("TPOT", step.tpot_ms), _row("E2E", step.e2e_ms)]
    rows += _ci_rows(step)
    return rows


def _ci_rows(step: StepSummary) -> list[str]:
    """``p99 95% CI  TTFT 18.9-19.1 · ITL ≥ 6.5 · ...`` (``≥ x``: the sample cannot give
    the upper end); of the statistic the SLA bounds (its first latency bound's: a
    percentile or the mean), else the p99; wrapped at 80 columns between metrics; nothing
    when no metric has an interval."""
    stat = next((c.stat for c in step.sla.checks if c.stat != "value"), "p99")
    cells = []
    confidence = None
    metrics = (
        (("E2E", step.e2e_ms),)
        if step.pooling is not None
        else (
            ("TTFT", step.ttft_ms),
            ("ITL", step.itl_ms),
            ("TPOT", step.tpot_ms),
            ("E2E", step.e2e_ms),
        )
    )
    for name, d in metrics:
        if d.ci is None or (pair := getattr(d.ci, stat, None)) is None:
            continue
        confidence = d.ci.confidence
        cells.append(f"{name} {interval_text(*pair)}")
    if not cells or confidence is None:
        return []
    label = stat.replace("_", ".")
    head = f"{label} {confidence_text(confidence)} CI"
    return fit(f"  {head:<11} ", cells, " · ")  # a space after the longest (mean 99.9% CI)


#: the console's lines are cut into more lines at a separator to fit this many columns
def interval_text(lo: float | None, hi: float | None) -> str:
    """``18.91-19.10``; an end the sample cannot give is left open: ``≥ 18.91``, ``≤ 19.10``."""
    if lo is None and hi is None:
        return "-"
    if hi is None:
        return f"≥ {lo:.2f}"
    if lo is None:
        return f"≤ {hi:.2f}"
    return f"{lo:.2f}-{hi:.2f}"


def _section_lines(step: StepSummary, details: bool) -> list[str]:
    """Under the table, each section of the step in the sections' order: a breakdown's
    laid-out lines as they are, each fact line fitted to the console's width (the step
    block indents by 2). A detail only with ``details`` or when its verdict is off."""
    out: list[str] = []
    for section in step_sections(step):
        if section.detail and not details and section.verdict != "off":
            continue
        if section.console is not None:
            out += section.console
            continue
        width = CONSOLE_WIDTH - 2
        out += [f"  {ln}" for text in section.lines for ln in fit("", phrases(text), " ", width)]
    return out


def step_warning_lines(step: StepSummary) -> list[str]:
    """The step's ``  warning: ...`` lines (the runner prints them to stderr)."""
    lines = [f"  warning: {w}" for w in [*step.client.warnings, *facts.step_warnings(step)]]
    if step.little is not None and step.little.flagged:
        lines.append(
            f"  warning: Little's law off: {step.little.mean_in_flight:.1f} in flight sampled"
            f" vs {step.little.predicted:.1f} from throughput x latency"
        )
    return lines


def format_verdict(summary: Summary, out_dir: object) -> str:
    """The run's last two lines: the verdict and where the results are."""
    text = summary.verdict.text if summary.verdict is not None else "no step ran"
    return "\n".join([*fit("verdict: ", phrases(text), " "), f"results: {out_dir}"])


def format_step(
    step: StepSummary, prompt_length_source: str | None = None, *, warnings: bool = True
) -> str:
    """A readable block: counts, throughput, latency table, SLA and (unless told) warnings.

    ``prompt_length_source`` (the run's ``Summary.prompt_length_source``):
    with ``approximate`` the sections' details are printed too (the planned-vs-server
    prompt line whenever the server counted prompts); otherwise a detail only when it
    is off (a request beyond tolerance).
    ``warnings=False`` leaves out :func:`step_warning_lines` (printed apart, to stderr).
    """
    r, t = step.requests, step.throughput
    lines = [
        f"step {step.index} · {load_label(step)}" + (" · INTERRUPTED" if step.interrupted else ""),
        f"  requests  {r.ok} ok, {r.failed} failed"
        + (f" ({_kinds(r.errors)})" if r.errors else "")
        + facts.cancelled_text(step)
        + f", {r.warmup} warm-up{facts.ramp_text(step)} · window {step.duration_s:.2f} s",
        *fit(
            "  throughput ",
            throughput_parts(step)
            if step.pooling is not None
            else [
                f"{t.requests_per_s:.2f} req/s",
                f"{t.output_tokens_per_s:,.0f} output tok/s",
                f"{t.input_tokens_per_s:,.0f} input tok/s",
                *(
                    [f"goodput {t.goodput_requests_per_s:.2f} req/s"]
                    if t.goodput_requests_per_s is not None
                    else []
                ),
            ],
            " · ",
        ),
        *_latency_rows(step),
        *_section_lines(step, details=prompt_length_source == "approximate"),
    ]
    if step.tokens.count_mismatches:
        note = f"note: {step.tokens.count_mismatches} requests where usage tokens != token events"
        lines += fit("  ", phrases(note + spec_mismatch_text(step)), " ")
    if step.sla.checks and not step.judged:  # its values, and no word of met or missed
        cut = [_check_text(c, "") for c in step.sla.checks]
        lines += fit("  SLA not judged (the step was cut short): ", cut, "; ")
    elif step.sla.checks:
        sla = step.sla
        lines += fit(f"  SLA {sla.verdict}: ", [_check_text(c) for c in sla.checks], "; ")
        if sla.cause == "saturated":  # the checks alone do not say it
            lines += fit("  ", phrases(f"{sla.verdict}: {sla.reason}"), " ")
        lines += [f"  {line}" for line in confidence_lines(step)]
    if warnings:
        lines.extend(step_warning_lines(step))
    return "\n".join(lines)


#: a check's verdict on the console: decided within, beyond, or not decided
_CHECK_WORD = {"met": "met", "missed": "MISSED", "inconclusive": "unsure"}


def _check_text(c: SlaCheck, word: str | None = None) -> str:
    """``ttft_ms.p99 152.09 <= 400 met``; a bound with no value says why. ``word``: in
    place of the check's verdict (``""``: none, for a step that is not judged)."""
    if word is None:
        word = _CHECK_WORD.get(c.verdict or "", "met" if c.passed else "MISSED")
    if c.metric == validity.METRIC:
        return validity.check_text(c, word).rstrip()
    tail = f" {word}" if word else ""
    if c.value is None:
        return f"{c.metric}.{c.stat} <= {c.bound:g}{tail} (no successful request)"
    return f"{c.metric}.{c.stat} {_fmt(c.value)} <= {c.bound:g}{tail}"
