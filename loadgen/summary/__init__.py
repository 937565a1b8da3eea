"""The schema of ``summary.json``: what metrics produce and every output reads.

Pydantic, because it is an edge: written by ``loadgen run``, read back by
``loadgen report`` and ``loadgen compare``. Latencies are milliseconds,
rates per second. Outputs (console, CSV, Markdown, HTML, plots) import this
package and nothing of the measuring side.

One module per concept, each importing only those before it:

- ``latency``: :class:`Distribution`, :class:`Intervals`
- ``counts``: :class:`LoadPoint`, :class:`RequestCounts`, :class:`Throughput`,
  :class:`TokenCounts`, :class:`PromptLengthCheck`, :class:`PrefixCacheStats`
- ``sla``: :class:`SlaBounds`, :class:`LatencyBounds`, :class:`SlaCheck`,
  :class:`SlaResult`, ``StepVerdict``, ``Cause``
- ``health``: :class:`ClientHealth`, :class:`LittleCheck`, :class:`TargetCheck`
- ``client_error``: :class:`ClientError`, :class:`ErrorBound` (loadgen's own error per
  metric)
- ``prometheus``: :class:`PrometheusStats` (named queries of a Prometheus over a step)
- ``telemetry``: :class:`StepTelemetry` and its parts
- ``mix``: :class:`ModelStats` (one model's share of a step)
- ``calibration``: :class:`PromptCalibration` (which engine's tokenize answered)
- ``environment``: :class:`Environment` (server, GPUs and client, seen at the pre-flight)
- ``validity``: :class:`OutputValidity`
- ``pooling``: :class:`PoolingStats` (embeddings, rerank)
- ``media``: :class:`MediaStats`
- ``sessions``: :class:`SessionStats` (agent tasks and multi-turn chats as wholes)
- ``cache``: :class:`CachedTokenStats` (cached prompt tokens as the answers counted them)
- ``spec_decode``: :class:`SpecDecodeStats` (the server's draft counters over a step)
- ``phases``: :class:`ConnectionPhases` (new connections beside reused ones)
- ``frontier``: :class:`FrontierPoint` (a step on the throughput-interactivity frontier)
- ``time_split``: :class:`TimeSplit`, :class:`PhaseTime` (where the time went, by the
  server's histograms)
- ``step``: :class:`StepSummary`, :class:`EndpointStats`, :class:`Cost`
- ``run``: :class:`Summary`, :class:`ClockAnchor`, :class:`Verdict`,
  :class:`WorkloadInfo`

Every public name is importable from ``loadgen.summary``; :data:`PERCENTILES`
is :data:`loadgen.vocab.PERCENTILES`, re-exported.
"""

from loadgen.summary.cache import BY_TURN_MAX, CachedTokenStats
from loadgen.summary.calibration import TOKENIZE_ENGINES, PromptCalibration
from loadgen.summary.client_error import ClientError, ErrorBound
from loadgen.summary.counts import (
    LoadPoint,
    PrefixCacheStats,
    PromptLengthCheck,
    RequestCounts,
    Throughput,
    TokenCounts,
)
from loadgen.summary.environment import ClientHost, EnvGpu, Environment, GpuProcess
from loadgen.summary.frontier import FrontierPoint
from loadgen.summary.health import ClientHealth, LittleCheck, TargetCheck
from loadgen.summary.latency import Distribution, Intervals
from loadgen.summary.media import MediaStats
from loadgen.summary.mix import ModelStats
from loadgen.summary.phases import NEW_SHARE_NOTE, ConnectionPhases, PhaseGroup
from loadgen.summary.pooling import THROUGHPUT_FIELDS, TOKEN_TIMING_FIELDS, PoolingStats
from loadgen.summary.prometheus import MAX_SERIES, PrometheusStats, PromQueryStats, PromSeries
from loadgen.summary.run import (
    ClockAnchor,
    Summary,
    Verdict,
    WorkloadAgent,
    WorkloadInfo,
    WorkloadPrefix,
    WorkloadSessions,
)
from loadgen.summary.sessions import SessionStats
from loadgen.summary.sla import Cause, LatencyBounds, SlaBounds, SlaCheck, SlaResult, StepVerdict
from loadgen.summary.spec_decode import SpecDecodeStats
from loadgen.summary.step import Cost, EndpointStats, StepSummary
from loadgen.summary.telemetry import (
    GpuStats,
    GpuTotal,
    HostStats,
    Mean,
    MeanMax,
    Peak,
    ServerStats,
    StepTelemetry,
    TelemetryGap,
    TelemetryWindow,
)
from loadgen.summary.time_split import PART_WORDS, PHASES, PhaseTime, TimeSplit
from loadgen.summary.validity import OutputValidity
from loadgen.vocab import PERCENTILES

__all__ = [
    "BY_TURN_MAX",
    "MAX_SERIES",
    "NEW_SHARE_NOTE",
    "PART_WORDS",
    "PERCENTILES",
    "PHASES",
    "THROUGHPUT_FIELDS",
    "TOKENIZE_ENGINES",
    "TOKEN_TIMING_FIELDS",
    "CachedTokenStats",
    "Cause",
    "ClientError",
    "ClientHealth",
    "ClientHost",
    "ClockAnchor",
    "ConnectionPhases",
    "Cost",
    "Distribution",
    "EndpointStats",
    "EnvGpu",
    "Environment",
    "ErrorBound",
    "FrontierPoint",
    "GpuProcess",
    "GpuStats",
    "GpuTotal",
    "HostStats",
    "Intervals",
    "LatencyBounds",
    "LittleCheck",
    "LoadPoint",
    "Mean",
    "MeanMax",
    "MediaStats",
    "ModelStats",
    "OutputValidity",
    "Peak",
    "PhaseGroup",
    "PhaseTime",
    "PoolingStats",
    "PrefixCacheStats",
    "PromQueryStats",
    "PromSeries",
    "PrometheusStats",
    "PromptCalibration",
    "PromptLengthCheck",
    "RequestCounts",
    "ServerStats",
    "SessionStats",
    "SlaBounds",
    "SlaCheck",
    "SlaResult",
    "SpecDecodeStats",
    "StepSummary",
    "StepTelemetry",
    "StepVerdict",
    "Summary",
    "TargetCheck",
    "TelemetryGap",
    "TelemetryWindow",
    "Throughput",
    "TimeSplit",
    "TokenCounts",
    "Verdict",
    "WorkloadAgent",
    "WorkloadInfo",
    "WorkloadPrefix",
    "WorkloadSessions",
]
