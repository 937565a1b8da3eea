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

Its modules import each other directly, never through this door.
"""

from loadgen.scenario.agent_spec import MAX_AGENT_CALLS, MAX_FAN_OUT, AgentSpec, FanOutSpec
from loadgen.scenario.cancel_spec import CancelSpec
from loadgen.scenario.checks import load_warnings
from loadgen.scenario.defaults import (
    DEFAULT_CONCURRENCY,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_REQUESTS,
    no_file_scenario,
    safe_name,
)
from loadgen.scenario.dists import (
    DatasetSpec,
    Distribution,
    EmpiricalDist,
    ExponentialSeconds,
    FixedDist,
    FixedSeconds,
    FloatDistribution,
    LognormalDist,
    LognormalSeconds,
    NormalDist,
    UniformDist,
    UniformSeconds,
)
from loadgen.scenario.listen import parse_listen
from loadgen.scenario.load import DROP, Overrides, load_scenario, parse_scenario, split_list
from loadgen.scenario.loadspec import (
    TRACE_FORMATS,
    ConcurrencyLoad,
    LoadSpec,
    OfflineLoad,
    RateLoad,
    StopOnErrors,
    TraceLoad,
)
from loadgen.scenario.media_spec import (
    IMAGE_APIS,
    MAX_AUDIO_S,
    MAX_IMAGE_SIDE,
    MAX_IMAGES,
    AudioSpec,
    ImagesSpec,
)
from loadgen.scenario.models import Scenario
from loadgen.scenario.output_spec import DEFAULT_PARAMETERS, ResponseFormatSpec, ToolsSpec
from loadgen.scenario.overrides import check_lengths_apply, flag_overrides
from loadgen.scenario.planned import media_bytes
from loadgen.scenario.sla_spec import PercentileBounds, SlaSpec
from loadgen.scenario.target_spec import TargetSpec, Timeouts, check_base_url
from loadgen.scenario.telemetry_sources import dcgm_metrics_url
from loadgen.scenario.telemetry_spec import TelemetrySpec
from loadgen.scenario.workload_spec import WorkloadSpec
from loadgen.vocab import API_NAMES

__all__ = [
    "API_NAMES",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_PARAMETERS",
    "DEFAULT_PROMPT_TOKENS",
    "DEFAULT_REQUESTS",
    "DROP",
    "IMAGE_APIS",
    "MAX_AGENT_CALLS",
    "MAX_AUDIO_S",
    "MAX_FAN_OUT",
    "MAX_IMAGES",
    "MAX_IMAGE_SIDE",
    "TRACE_FORMATS",
    "AgentSpec",
    "AudioSpec",
    "CancelSpec",
    "ConcurrencyLoad",
    "DatasetSpec",
    "Distribution",
    "EmpiricalDist",
    "ExponentialSeconds",
    "FanOutSpec",
    "FixedDist",
    "FixedSeconds",
    "FloatDistribution",
    "ImagesSpec",
    "LoadSpec",
    "LognormalDist",
    "LognormalSeconds",
    "NormalDist",
    "OfflineLoad",
    "Overrides",
    "PercentileBounds",
    "RateLoad",
    "ResponseFormatSpec",
    "Scenario",
    "SlaSpec",
    "StopOnErrors",
    "TargetSpec",
    "TelemetrySpec",
    "Timeouts",
    "ToolsSpec",
    "TraceLoad",
    "UniformDist",
    "UniformSeconds",
    "WorkloadSpec",
    "check_base_url",
    "check_lengths_apply",
    "dcgm_metrics_url",
    "flag_overrides",
    "load_scenario",
    "load_warnings",
    "media_bytes",
    "no_file_scenario",
    "parse_listen",
    "parse_scenario",
    "safe_name",
    "split_list",
]
