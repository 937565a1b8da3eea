"""The scenario: what to load, how hard, and what counts as good enough.

Owns :class:`Scenario` (a whole scenario file), its smallest section
(``cost``) and the checks across sections (an open-loop step's plan must fit
in memory). The other sections have modules of their own: ``target``
(:mod:`~loadgen.scenario.target_spec`), ``workload``
(:mod:`~loadgen.scenario.workload_spec`), ``load``
(:mod:`~loadgen.scenario.loadspec`), ``sla``
(:mod:`~loadgen.scenario.sla_spec`), ``telemetry``
(:mod:`~loadgen.scenario.telemetry_spec`) and the distributions
(:mod:`~loadgen.scenario.dists`); callers outside the package reach them
through :mod:`loadgen.scenario`.

Pydantic models at the edge, strict (``extra="forbid"``), one description per
field; ``docs/scenario.md`` documents the same fields. Nothing here does I/O.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from loadgen.scenario.cancel_spec import check_cancel
from loadgen.scenario.limits import MAX_NAME
from loadgen.scenario.loadspec import LoadSpec, OfflineLoad, RateLoad, TraceLoad
from loadgen.scenario.media_spec import media_fits
from loadgen.scenario.output_spec import FORMAT_APIS, OUTPUT_APIS, SCHEMA_ONLY_APIS
from loadgen.scenario.planned import BYTES_PER_TOKEN, MAX_PLANNED_BYTES, mean_length, media_bytes
from loadgen.scenario.pooling import check_pooling
from loadgen.scenario.sla_spec import SlaSpec
from loadgen.scenario.target_spec import TargetSpec
from loadgen.scenario.telemetry_spec import TelemetrySpec
from loadgen.scenario.workload_spec import WorkloadSpec
from loadgen.strict import Spec
from loadgen.vocab import CHAT_APIS

__all__ = ["AGENT_APIS", "MAX_PLANNED_TOKENS", "CostSpec", "Scenario"]


#: a name that is safe as one path component
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=@,-][A-Za-z0-9 ._+=@,-]*")


class CostSpec(Spec):
    usd_per_hour: float | None = Field(
        None, gt=0, description="What the serving hardware costs per hour, in USD."
    )
    # -- frontier
    gpus: int | None = Field(
        None,
        gt=0,
        description="The GPUs serving the model: throughput per GPU divides by it (else "
        "by the GPUs the telemetry sampled).",
    )


class Scenario(Spec):
    """A whole scenario file."""

    name: str = Field(
        "scenario",
        min_length=1,
        max_length=MAX_NAME,
        description="Name shown in reports and used in the default results folder: "
        "letters, digits, spaces and . _ - + = @ , only, not starting with a dot.",
    )
    target: TargetSpec = Field(default_factory=TargetSpec, description="The server under test.")
    workload: WorkloadSpec = Field(
        default_factory=WorkloadSpec, description="Prompts and output lengths."
    )
    load: LoadSpec = Field(description="The sweep: load values and step length.")
    sla: SlaSpec = Field(default_factory=SlaSpec, description="Service-level objectives.")
    telemetry: TelemetrySpec = Field(
        default_factory=TelemetrySpec, description="Server-side telemetry sources."
    )
    cost: CostSpec = Field(default_factory=CostSpec, description="Price of the hardware.")

    @field_validator("name")
    @classmethod
    def _name_is_a_path_part(cls, name: str) -> str:
        """The default results folder is results/<name>-<time>: no ../, no /, no \\."""
        if not _SAFE_NAME.fullmatch(name):
            raise ValueError(
                "letters, digits, spaces and . _ - + = @ , only, not starting with a dot or space"
            )
        return name

    @model_validator(mode="after")
    def _workload_fits(self) -> Scenario:
        w = self.workload
        latency = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
        bounded = {m for m in latency if getattr(self.sla, m).items()}
        check_pooling(self.target, w, self.load, bounded)  # pooling APIs (embeddings, rerank)
        check_cancel(w.cancel, self.target.api, self.target.streams)  # users who stop
        if w.cancel is not None and w.agent is not None:
            msg = (
                "workload.cancel: not with workload.agent (an agent's calls are not "
                "cancelled by a user); drop one of them"
            )
            raise ValueError(msg)
        if w.prompt_as == "token_ids" and self.target.api != "openai-completions":
            raise ValueError(
                "workload.prompt_as token_ids needs target.api openai-completions, "
                f"not {self.target.api}"
            )
        if w.sessions is not None and self.target.api not in CHAT_APIS:
            raise ValueError(
                f"workload.sessions needs a chat API ({' | '.join(CHAT_APIS)}), "
                f"not {self.target.api}"
            )
        server_state = w.sessions is not None and w.sessions.state == "server"
        if server_state and self.target.api != "openai-responses":
            raise ValueError(
                "workload.sessions.state server chains previous_response_id: it needs "
                f"target.api openai-responses, not {self.target.api}"
            )
        _output_fits(self)
        if (why := _session_sla_fits(self)) is not None:
            raise ValueError(why)
        if (why := media_fits(self.target.api, w.images, w.audio)) is not None:
            raise ValueError(why)
        if w.sessions is not None and (w.images is not None or w.audio is not None):
            raise ValueError(
                "workload.images and workload.audio go with single requests: drop workload.sessions"
            )
        _agent_fits(self)
        if isinstance(self.load, TraceLoad):
            for name in ("dataset", "sessions"):
                if getattr(w, name) is not None:
                    raise ValueError(
                        f"load.mode trace takes lengths from the trace: drop workload.{name}"
                    )
        if isinstance(self.load, OfflineLoad) and w.sessions is not None:
            raise ValueError("load.mode offline sends single requests: drop workload.sessions")
        if isinstance(self.load, RateLoad | OfflineLoad):
            _open_loop_fits(self.load, w)
        return self


def _agent_fits(sc: Scenario) -> None:
    """Agent tasks need a text-generating API and a load that starts tasks."""
    w = sc.workload
    if w.agent is None:
        return
    api = sc.target.api
    if api not in AGENT_APIS:
        raise ValueError(f"workload.agent needs target.api {' | '.join(AGENT_APIS)}, not {api}")
    if w.images is not None or w.audio is not None:
        raise ValueError(
            "workload.images and workload.audio go with single requests: drop workload.agent"
        )
    if isinstance(sc.load, TraceLoad):
        raise ValueError("load.mode trace takes lengths from the trace: drop workload.agent")
    if isinstance(sc.load, OfflineLoad):
        raise ValueError("load.mode offline sends single requests: drop workload.agent")


def _output_fits(sc: Scenario) -> None:
    """Tools and response formats need an API that sends them; a validity bound needs one."""
    w = sc.workload
    for name, apis in (("tools", OUTPUT_APIS), ("response_format", FORMAT_APIS)):
        if getattr(w, name) is not None and sc.target.api not in apis:
            raise ValueError(
                f"workload.{name} needs target.api {' | '.join(apis)}, not {sc.target.api}"
            )
    fmt = w.response_format
    if fmt is not None and fmt.type == "json_object" and sc.target.api in SCHEMA_ONLY_APIS:
        raise ValueError(
            f"workload.response_format.type json_object: {sc.target.api} takes json_schema "
            "only (output_config.format has no json_object): give json_schema: FILE"
        )
    if sc.sla.valid_output_rate is not None and w.tools is None and w.response_format is None:
        raise ValueError(
            "sla.valid_output_rate bounds the validity of tool calls and structured answers: "
            "it needs workload.tools or workload.response_format"
        )


def _session_sla_fits(sc: Scenario) -> str | None:
    """sla.session_s bounds sessions: the workload must make some (sessions, an agent
    workload, or a trace, which may carry them); why not, else None."""
    bounds = sc.sla.session_s.items()
    if not bounds:
        return None
    w = sc.workload
    agent = w.agent
    if w.sessions is not None or agent is not None or isinstance(sc.load, TraceLoad):
        return None
    stat, value = bounds[0]
    return (
        f"sla.session_s.{stat}: {value:g} bounds session time, but the workload makes no "
        "sessions: add workload.sessions (or an agent workload), or drop sla.session_s"
    )


#: The APIs an agent task can talk to: the chat ones, and two that take its context as text.
AGENT_APIS = (*CHAT_APIS, "openai-completions", "tgi")

#: Prompt tokens an open-loop step may plan up front (its requests are made
#: before the step starts so that sending them costs nothing): about 2.5 GB of text.
MAX_PLANNED_TOKENS = MAX_PLANNED_BYTES // BYTES_PER_TOKEN


def _open_loop_fits(load: RateLoad | OfflineLoad, w: WorkloadSpec) -> None:
    """An open-loop step's planned requests must fit in memory (closed loop plans lazily):
    their prompts' text and their synthetic images and audio together."""
    if isinstance(load, OfflineLoad):
        arrivals = float(load.requests_per_step or 0)
    elif load.requests_per_step is not None:
        rate = max(load.points, default=0.0)
        arrivals = load.requests_per_step + load.warmup_requests + rate * load.ramp_up_s / 2
    else:
        rate = max(load.points, default=0.0)
        arrivals = rate * ((load.duration_s or 0.0) + load.ramp_up_s / 2)
    # sessions and agent tasks plan lengths only; a dataset's rows are shared, not copied
    shared = w.sessions is not None or w.dataset is not None or w.agent is not None
    mean = 1.0 if shared else mean_length(w.prompt_tokens)
    media = media_bytes(w.images, w.audio)
    if media and arrivals * (mean * BYTES_PER_TOKEN + media) > MAX_PLANNED_BYTES:
        raise ValueError(
            f"load: an open-loop step plans its requests up front; about {arrivals:,.0f} "
            f"requests of ~{mean:,.0f} prompt tokens and ~{media / 1e6:,.1f} MB of images "
            f"and audio each is more than {MAX_PLANNED_BYTES / 1e9:g} GB: shorten the step "
            "(requests_per_step, duration_s), lower the rate or make the images smaller"
        )
    if arrivals * mean > MAX_PLANNED_TOKENS:
        raise ValueError(
            f"load: an open-loop step plans its requests up front; about {arrivals:,.0f} "
            f"requests of ~{mean:,.0f} prompt tokens is more than {MAX_PLANNED_TOKENS:,} "
            "tokens: shorten the step (requests_per_step, duration_s) or lower the rate"
        )
