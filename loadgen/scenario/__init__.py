"""Scenario files: the pydantic models, the loader and the command-line overrides.

Owns reading a YAML scenario into a validated :class:`Scenario` (every
failure one line naming the file, the field and what was expected), the
models of each section (one module a section; :mod:`~loadgen.scenario.models`
holds the whole file's), the flags that override fields
(:mod:`~loadgen.scenario.overrides`), the scenario of a run without a file
(:mod:`~loadgen.scenario.defaults`), and the checks that every value is one
JSON carries (:mod:`~loadgen.scenario.values`) and every file and variable it
names is there, a regular file of bounded size (:mod:`~loadgen.scenario.inputs`).

May import: loadgen.errors, redact, strict (the base models), vocab.

Public names: Scenario, load_scenario, parse_scenario, Overrides, split_list,
the section models (TargetSpec, WorkloadSpec, LoadSpec, SlaSpec, ...), the load
modes (ConcurrencyLoad, RateLoad, OfflineLoad, TraceLoad), the length
distributions (Distribution, FixedDist, EmpiricalDist), API_NAMES. The package's
other modules import each other directly, never through this door.
"""

from loadgen.scenario.dists import Distribution, EmpiricalDist, FixedDist
from loadgen.scenario.load import Overrides, load_scenario, parse_scenario, split_list
from loadgen.scenario.loadspec import ConcurrencyLoad, LoadSpec, OfflineLoad, RateLoad, TraceLoad
from loadgen.scenario.models import Scenario
from loadgen.scenario.sla_spec import PercentileBounds, SlaSpec
from loadgen.scenario.target_spec import TargetSpec, Timeouts
from loadgen.scenario.telemetry_spec import TelemetrySpec
from loadgen.scenario.workload_spec import WorkloadSpec
from loadgen.vocab import API_NAMES

__all__ = [
    "API_NAMES",
    "ConcurrencyLoad",
    "Distribution",
    "EmpiricalDist",
    "FixedDist",
    "LoadSpec",
    "OfflineLoad",
    "Overrides",
    "PercentileBounds",
    "RateLoad",
    "Scenario",
    "SlaSpec",
    "TargetSpec",
    "TelemetrySpec",
    "Timeouts",
    "TraceLoad",
    "WorkloadSpec",
    "load_scenario",
    "parse_scenario",
    "split_list",
]
