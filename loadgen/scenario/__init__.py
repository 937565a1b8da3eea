"""Scenario files: the pydantic models, the loader and the command-line overrides.

Owns reading a YAML scenario into a validated :class:`Scenario` (every
failure one line naming the file, the field and what was expected), the
models of each section (one module a section, all re-exported by
:mod:`~loadgen.scenario.models`), the flags that override fields
(:mod:`~loadgen.scenario.overrides`), the scenario of a run without a file
(:mod:`~loadgen.scenario.defaults`), and the checks that every value is one
JSON carries (:mod:`~loadgen.scenario.values`) and every file and variable it
names is there, a regular file of bounded size (:mod:`~loadgen.scenario.inputs`).

May import: loadgen.errors, redact, strict (the base models), vocab.

Public names: Scenario, load_scenario, parse_scenario, Overrides, split_list,
the section models (TargetSpec, WorkloadSpec, LoadSpec, SlaSpec, ...), API_NAMES.
"""

from loadgen.scenario.load import Overrides, load_scenario, parse_scenario, split_list
from loadgen.scenario.models import (
    API_NAMES,
    LoadSpec,
    PercentileBounds,
    Scenario,
    SlaSpec,
    TargetSpec,
    TelemetrySpec,
    Timeouts,
    WorkloadSpec,
)

__all__ = [
    "API_NAMES",
    "LoadSpec",
    "Overrides",
    "PercentileBounds",
    "Scenario",
    "SlaSpec",
    "TargetSpec",
    "TelemetrySpec",
    "Timeouts",
    "WorkloadSpec",
    "load_scenario",
    "parse_scenario",
    "split_list",
]
