"""Scenario files: the pydantic models and the loader."""

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
