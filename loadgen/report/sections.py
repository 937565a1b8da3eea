"""Every feature's section of a step, in the one order the outputs show them.

:data:`STEP_SECTIONS` are the builders (each feature module's ``section``);
:func:`step_sections` runs them over a step. The console, report.md/html
(:mod:`loadgen.report.documents.step_doc`) and the step table (steps.csv,
Parquet, MLflow: :mod:`loadgen.report.step_table`) iterate the list; none of
them names a feature. Adding a feature's output is one module with a
``section(step)`` and one line here.

The order is the people's: the console's lines and report.md's facts follow it
(the breakdowns' console lines first, then validity, then the notes). Where an
output places a section elsewhere, the section says so: ``apart`` (report.md
lists validity after the facts), ``table`` (report.md puts breakdowns after the
latency table), ``late_columns`` (steps.csv puts the frontier's and the
telemetry's columns after the cost's).
"""

from __future__ import annotations

from collections.abc import Callable

from loadgen.report import (
    cache,
    client_error,
    client_queue,
    cost,
    endpoints,
    frontier,
    little,
    media,
    mix,
    phases,
    prompt_check,
    sessions,
    spec_decode,
    telemetry,
    time_split,
    ttft_end,
    validity,
)
from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["STEP_SECTIONS", "step_sections"]

#: a feature's builder: its section of the step, or None when it has nothing to say
Builder = Callable[[StepSummary], Section | None]

STEP_SECTIONS: tuple[Builder, ...] = (
    endpoints.section,
    mix.section,
    validity.section,
    ttft_end.section,
    client_error.section,
    cache.section,
    spec_decode.section,
    phases.section,
    time_split.section,
    media.section,
    frontier.section,
    prompt_check.section,
    sessions.section,
    little.section,
    cost.section,
    telemetry.section,
    client_queue.section,
)


def step_sections(step: StepSummary) -> list[Section]:
    """The step's sections, in :data:`STEP_SECTIONS`' order (those with something to say)."""
    return [s for build in STEP_SECTIONS if (s := build(step)) is not None]
