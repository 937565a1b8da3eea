"""The run as a whole: :class:`Summary`, the root of ``summary.json``.

Owns :class:`Summary`, its :class:`ClockAnchor`, the sweep's :class:`Verdict`
and the workload's description (:class:`WorkloadInfo`, only the keys the
runner gave).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from loadgen.redact import strip_userinfo
from loadgen.strict import Sparse, Strict
from loadgen.summary.calibration import PromptCalibration
from loadgen.summary.environment import Environment
from loadgen.summary.health import TargetCheck
from loadgen.summary.sla import SlaBounds
from loadgen.summary.step import StepSummary
from loadgen.vocab import PROFILE_NAMES

__all__ = [
    "ClockAnchor",
    "Summary",
    "Verdict",
    "WorkloadInfo",
    "WorkloadPrefix",
    "WorkloadSessions",
]


class ClockAnchor(Strict):
    """One (monotonic, wall-clock) pair read together at the start of the run.

    Every ``*_ns`` stamp in the summary and the records is on loadgen's monotonic
    clock; this pair turns one into a date: wall = wall_ns + (t - monotonic_ns).
    """

    monotonic_ns: int = Field(description="loadgen's monotonic clock at the anchor.")
    wall_ns: int = Field(description="The wall clock at the anchor, ns since the Unix epoch.")


class WorkloadPrefix(Strict):
    """Shared prefixes: ``groups`` of them, each ``tokens`` long or ``share`` of a prompt."""

    groups: int
    tokens: int | None = None
    share: float | None = None


class WorkloadSessions(Strict):
    """Multi-turn sessions: turns per session and the think time, as one line each."""

    turns: str
    think_time_s: str | None = None


class WorkloadAgent(Strict):
    """Agent tasks (workload.agent): each distribution as one line; ``fan_out`` one line."""

    calls: str
    tool_result_tokens: str
    tool_time_s: str | None = None
    max_context_tokens: int | None = None
    fan_out: str | None = None  # ``after call 2: fixed 2 sub-agents of fixed 3 calls, ...``


class WorkloadInfo(Sparse):
    """A short description of the workload (loadgen.workload.describe); lengths as one line
    for people, e.g. ``lognormal mean 512 std 256 [1, 4096]``."""

    prompt_length_source: str
    dataset: str | None = None
    dataset_rows: int | None = None
    trace: str | None = None
    prompt_tokens: str | None = None
    output_tokens: str | None = None
    tokenizer: str | None = None
    prefix: WorkloadPrefix | None = None
    sessions: WorkloadSessions | None = None
    # -- tool calls and structured output: one line each, e.g. ``2 from tools.json: ...``
    tools: str | None = None
    response_format: str | None = None
    # -- pooling APIs (embeddings, rerank)
    batch: str | None = None  # embeddings: inputs per request
    documents: str | None = None  # rerank: documents per request
    query_tokens: str | None = None  # rerank: the query's length
    # -- inputs beyond text: one line each, e.g. ``uniform [1, 2] a request, fixed 448 x
    # -- fixed 336 px, jpeg`` (synthetic), ``from the dataset: 40 of 200 rows, 52 images``
    images: str | None = None
    audio: str | None = None  # e.g. ``fixed 1.5 s a request, 16000 Hz WAV``
    # -- agents (workload.agent)
    agent: WorkloadAgent | None = None
    # -- users who stop, one line: ``20% of requests aborted by the client, after uniform
    # -- [4, 32] token events``
    cancel: str | None = None


class Verdict(Strict):
    """The sweep's answer: the highest load that met every SLA bound."""

    mode: str  # "concurrency" | "rate"
    sweep: str = "list"  # "list" | "auto" | "sla-search"
    max_passing: float | None = None  # the highest passing load (trace: smallest time scale)
    goodput_requests_per_s: float | None = None  # at max_passing
    output_tokens_per_s: float | None = None  # at max_passing
    bracket: list[float] | None = None  # sla-search: [passing, failing] around the answer
    tolerance: float | None = None  # sla-search: the bracket width aimed for
    saturation_rps: float | None = None  # auto: throughput found by the saturation probe
    stopped_early: str | None = None  # why the sweep stopped before its last step
    inconclusive_steps: list[int] = Field(
        default_factory=list,
        description="Indexes of steps in which loadgen itself was saturated: neither pass "
        "nor fail (`--strict` exits 1 when this is not empty).",
    )
    sla_set: bool | None = Field(
        None,
        description="The run had SLA bounds to meet; without them no output speaks of "
        "meeting an SLA (the verdict names the highest load run cleanly). Null in "
        "summaries written before it (Summary.sla_set then asks the steps).",
    )
    interrupted_steps: list[int] = Field(
        default_factory=list,
        description="Indexes of steps cut short by a stop signal (Ctrl-C): shown as far as "
        "they got and left out of the verdict, the frontier's best point and every "
        "output's SLA column.",
    )
    text: str = ""  # one sentence for people


class Summary(Strict):
    """The root of summary.json. Assignments are validated: a dict given for a typed
    field (``sla``, ``workload``) becomes its model."""

    model_config = ConfigDict(validate_assignment=True)

    loadgen_version: str
    name: str
    run_id: str
    target_url: str
    api: str
    model: str
    clock_anchor: ClockAnchor = Field(
        description="One (monotonic, wall-clock) pair taken together at the start."
    )
    #: processes that sent the load (load.workers); 1: this process alone
    workers: int = 1
    #: --ray: the worst worker's clock-offset uncertainty against the parent (half the
    #: best round trip); step windows and the timeline are good to this, latencies exact
    workers_clock_uncertainty_ms: float | None = None
    metrics_profile: str = Field(
        "loadgen", description="Whose metric definitions (loadgen.vocab.PROFILE_NAMES)."
    )
    steps: list[StepSummary] = Field(default_factory=list)
    verdict: Verdict | None = None
    interrupted: bool = False
    stopped_on_errors: str | None = Field(
        None,
        description="Why the run stopped at its start (load.stop_on_errors): every request "
        "failed to connect, so the target was taken to be down.",
    )
    sla: SlaBounds = Field(
        default_factory=SlaBounds, description="The scenario's SLA block, as the run judged by it."
    )
    target_check: TargetCheck | None = Field(
        None, description="What the pre-flight check saw of the target."
    )
    prompt_length_source: str = Field(
        "approximate",
        description="Where the requested prompt lengths come from: tokenizer | server | "
        "approximate | token_ids | dataset.",
    )
    workload: WorkloadInfo | None = Field(
        None, description="A short description of the workload (filled by the runner)."
    )
    endpoints: list[str] | None = Field(
        None,
        description="The base URLs requests were spread over (target.urls, or the mock "
        "replicas' local URLs); null for one endpoint.",
    )
    routing: str | None = Field(
        None, description="How requests picked their endpoint (target.routing); null for one."
    )
    # -- model mixes and engine tokenizers
    models: list[str] | None = Field(
        None, description="The models of the mix (target.models); null for one model."
    )
    calibration: PromptCalibration | None = Field(
        None,
        description="Which engine's tokenize endpoint calibrated the prompt lengths "
        "(prompt_length_source server); null when none did.",
    )
    # -- environment
    environment: Environment | None = Field(
        None,
        description="What the run could see of the server, GPUs and client before the "
        "first step (loadgen.summary.environment); null in runs made before it.",
    )

    @property
    def sla_set(self) -> bool:
        """The run had SLA bounds, as its verdict says (``verdict.sla_set``); a summary
        written before that field: its SLA block states one, or a step checked one."""
        v = self.verdict
        if v is not None and v.sla_set is not None:
            return v.sla_set
        return self.sla.stated() or any(s.sla.checks for s in self.steps)

    @field_validator("metrics_profile")
    @classmethod
    def _known_profile(cls, name: str) -> str:
        if name not in PROFILE_NAMES:
            msg = f"metrics profile {name!r}; expected one of {', '.join(PROFILE_NAMES)}"
            raise ValueError(msg)
        return name

    @field_validator("target_url")
    @classmethod
    def _no_userinfo(cls, url: str) -> str:
        """A password in the target URL never reaches summary.json or the reports."""
        return strip_userinfo(url)

    @field_validator("endpoints")
    @classmethod
    def _no_userinfo_in_any(cls, urls: list[str] | None) -> list[str] | None:
        return None if urls is None else [strip_userinfo(u) for u in urls]
