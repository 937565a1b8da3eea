"""The ``load`` section: one model per mode, told apart by ``mode``.

- ``concurrency``: closed loop, one step per number of concurrent users.
- ``rate``: open loop, one step per request rate (or ``sweep: auto``).
- ``trace``: open loop at the times a trace file recorded, one step per
  ``time_scale``.
- ``offline``: every request of the step sent at once (MLPerf's Offline
  scenario), one step per ``max_concurrency`` (or one step with no cap).

A field that does not apply to the mode is an error ("unknown field"), not
silently ignored. Without ``mode`` a load is ``concurrency``, or ``rate`` for
``sweep: auto`` (its steps after the probe are rates).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from loadgen.scenario.limits import (
    MAX_CONCURRENCY,
    MAX_LIST,
    MAX_RATE,
    MAX_REQUESTS,
    MAX_SCALE,
    MAX_SECONDS,
    MAX_WORKERS,
    MIN_RATE,
    MIN_SCALE,
    MIN_SECONDS,
)
from loadgen.strict import Spec

__all__ = [
    "LOAD_TAGS",
    "TRACE_FORMATS",
    "ConcurrencyLoad",
    "LoadSpec",
    "OfflineLoad",
    "RateLoad",
    "StopEarly",
    "StopOnErrors",
    "TraceLoad",
]

TRACE_FORMATS = ("auto", "mooncake", "azure", "burstgpt", "loadgen", "otlp")


class StopEarly(Spec):
    max_error_rate: float = Field(
        0.5, ge=0, le=1, description="Stop the sweep after a step with a higher error rate."
    )
    sla_factor: float = Field(
        4.0, gt=1, description="Stop after a step whose value exceeds an SLA bound this many times."
    )


class StopOnErrors(Spec):
    requests: int = Field(
        20,
        ge=1,
        le=MAX_REQUESTS,
        description="Stop once this many requests failed to connect before any reached the server.",
    )
    seconds: float = Field(
        2.0,
        ge=MIN_SECONDS,
        le=MAX_SECONDS,
        description="... or once such failures, and nothing else, have gone on this long.",
    )


class _Common(Spec):
    requests_per_step: int | None = Field(
        None,
        ge=1,
        le=MAX_REQUESTS,
        description="Measured requests per step (warm-up and ramp-up not included).",
    )
    duration_s: float | None = Field(
        None,
        ge=MIN_SECONDS,
        le=MAX_SECONDS,
        description="Length of each step in seconds (instead of requests_per_step).",
    )
    stop_early: StopEarly | None = Field(
        default_factory=StopEarly,
        description="When to abandon a sweep early; null runs every step whatever happens.",
    )
    stop_on_errors: StopOnErrors | None = Field(
        default_factory=StopOnErrors,
        description="Stop the run at its start when every request fails to connect (a dead "
        "target): after `requests` such failures or `seconds`, exit 3 with the hint; `off` "
        "(or null) sends the whole sweep whatever happens.",
    )
    workers: int | Literal["auto"] = Field(
        1,
        description="Processes that send the load, each with its own event loop and "
        "connections (`auto`: one per core, leaving one for the system and one for the "
        "built-in mock).",
    )

    @field_validator("stop_on_errors", mode="before")
    @classmethod
    def _stop_off(cls, v: Any) -> Any:
        return None if v == "off" or v is False else v

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, w: Any) -> Any:
        """A number of processes 1..MAX_WORKERS (a flag gives it as text), or ``auto``."""
        if w == "auto":
            return w
        text = w.strip() if isinstance(w, str) else None
        if isinstance(w, int) and not isinstance(w, bool):
            n: int | None = w
        else:
            n = int(text) if text is not None and text.isdigit() else None
        if n is None or not 1 <= n <= MAX_WORKERS:
            raise ValueError(f"expected an integer from 1 to {MAX_WORKERS}, or auto")
        return n

    @property
    def points(self) -> list[float]:
        """The sweep's load values, in order."""
        raise NotImplementedError


class _Swept(_Common):
    """What closed and open loop share: warm-up, ramp-up, the sweep strategy."""

    warmup_requests: int = Field(
        0,
        ge=0,
        le=MAX_REQUESTS,
        description="Requests sent first in each step, excluded from the metrics.",
    )
    ramp_up_s: float = Field(
        0.0,
        ge=0,
        le=MAX_SECONDS,
        description="Seconds over which concurrency or rate rises linearly from zero; "
        "requests started meanwhile are recorded but left out of the metrics.",
    )
    search_tolerance: float | None = Field(
        None,
        gt=0,
        description="sweep sla-search: stop when the bracket is this narrow "
        "(default 1 for concurrency, 5% of the upper bound for rate).",
    )
    max_search_steps: int = Field(
        12, ge=2, le=100, description="sweep sla-search: most steps the bisection may run."
    )

    @model_validator(mode="after")
    def _step_length(self) -> _Swept:
        if self.requests_per_step is None and self.duration_s is None:
            raise ValueError("give `requests_per_step` or `duration_s`")
        if self.requests_per_step is not None and self.duration_s is not None:
            raise ValueError("give only one of `requests_per_step` and `duration_s`")
        sweep = getattr(self, "sweep", "list")
        if sweep == "sla-search" and len(set(self.points)) < 2:
            raise ValueError("sweep sla-search needs two values: a low and a high bound")
        if 0 < self.ramp_up_s < MIN_SECONDS:
            raise ValueError(f"ramp_up_s: 0, or at least {MIN_SECONDS} s")
        _only_for_sweep(self, "sla-search", ("search_tolerance", "max_search_steps"))
        return self


class ConcurrencyLoad(_Swept):
    mode: Literal["concurrency"] = Field(
        "concurrency", description="concurrency (closed loop) | rate (open loop) | trace."
    )
    sweep: Literal["list", "sla-search"] = Field(
        "list",
        description="list: the given values in order; auto: saturation probe, then rates up to "
        "the maximum (rate mode); sla-search: bisection for the highest load meeting the SLA.",
    )
    concurrency: list[Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(
        min_length=1,
        max_length=MAX_LIST,
        description="Closed loop: one step per number of concurrent requests.",
    )

    @property
    def points(self) -> list[float]:
        return [float(v) for v in self.concurrency]


class RateLoad(_Swept):
    mode: Literal["rate"] = Field("rate", description="Open loop.")
    sweep: Literal["list", "auto", "sla-search"] = Field("list", description="As for concurrency.")
    rate: list[Annotated[float, Field(ge=MIN_RATE, le=MAX_RATE)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_LIST,
        description="Open loop: one step per request rate (requests/s).",
    )
    arrival: Literal["poisson", "gamma", "constant"] = Field(
        "poisson", description="Open loop arrival process."
    )
    burstiness: float = Field(
        1.0,
        ge=MIN_SCALE,
        le=MAX_SCALE,
        description="Gamma shape; 1 = Poisson, <1 burstier, >1 steadier (as vLLM).",
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="Open loop: cap on requests in flight (None = no cap).",
    )
    auto_points: int = Field(8, ge=2, le=100, description="sweep auto: number of rates to run.")
    probe_concurrency: int = Field(
        64, ge=1, le=MAX_CONCURRENCY, description="sweep auto: concurrency of the saturation probe."
    )

    @model_validator(mode="after")
    def _rates(self) -> RateLoad:
        if self.sweep != "auto" and not self.rate:
            raise ValueError("mode rate needs a non-empty `rate` list")
        _only_for_sweep(self, "auto", ("auto_points", "probe_concurrency"))
        return self

    @property
    def points(self) -> list[float]:
        return [float(v) for v in self.rate or []]


class _Unswept(_Common):
    """A mode with no sweep strategy: one step per listed value (time_scale, max_concurrency)."""

    @property
    def sweep(self) -> str:
        return "list"


class TraceLoad(_Unswept):
    mode: Literal["trace"] = Field(
        "trace", description="Replay a trace file's arrivals, open loop."
    )
    trace: str = Field(description="The trace file (relative paths: from the scenario's folder).")
    trace_format: Literal["auto", "mooncake", "azure", "burstgpt", "loadgen", "otlp"] = Field(
        "auto",
        description="Layout of the trace file (otlp: OpenTelemetry GenAI spans, an agent "
        "trace); auto tells by extension and header.",
    )
    time_scale: list[Annotated[float, Field(ge=MIN_SCALE, le=MAX_SCALE)]] = Field(
        default_factory=lambda: [1.0],
        min_length=1,
        max_length=MAX_LIST,
        description="One step per value: gaps between arrivals are multiplied by it "
        "(0.5 = twice the recorded rate).",
    )
    window_s: (
        tuple[
            Annotated[float, Field(ge=0, le=MAX_SECONDS * 52)],
            Annotated[float, Field(gt=0, le=MAX_SECONDS * 52)],
        ]
        | None
    ) = Field(None, description="[start, end) seconds of the trace to replay (None = all of it).")
    max_concurrency: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY, description="Cap on requests in flight (None = no cap)."
    )

    @model_validator(mode="after")
    def _window(self) -> TraceLoad:
        if self.window_s is not None and self.window_s[1] <= self.window_s[0]:
            raise ValueError(f"window_s end must be after its start, got {list(self.window_s)}")
        return self

    @property
    def points(self) -> list[float]:
        return [float(v) for v in self.time_scale]


class OfflineLoad(_Unswept):
    mode: Literal["offline"] = Field(
        "offline", description="Every request of the step at once: the maximum throughput."
    )
    max_concurrency: list[Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_LIST,
        description="One step per value: at most this many in flight, the rest queued "
        "(None: one step, every request in flight at once).",
    )

    @model_validator(mode="after")
    def _count(self) -> OfflineLoad:
        if self.requests_per_step is None:
            raise ValueError("mode offline needs `requests_per_step` (the batch sent at once)")
        if self.duration_s is not None:
            raise ValueError("mode offline sends a fixed batch: give `requests_per_step` only")
        return self

    @property
    def points(self) -> list[float]:
        """Each step's cap on requests in flight; 0 stands for none."""
        return [float(c) for c in self.max_concurrency] if self.max_concurrency else [0.0]


def _only_for_sweep(model: BaseModel, sweep: str, names: tuple[str, ...]) -> None:
    """Refuse a field of ``names`` given a value other than its default, unless ``sweep``.

    A field of another sweep given at its default is harmless (the resolved
    scenario in a results directory lists every default, and must load back).
    """
    if getattr(model, "sweep", "list") == sweep:
        return
    fields = type(model).model_fields
    changed = [
        n for n in names if getattr(model, n) != fields[n].get_default(call_default_factory=True)
    ]
    if changed:
        raise ValueError(f"{sorted(changed)[0]} applies to sweep {sweep} only")


def _mode(value: Any) -> str:
    if isinstance(value, dict):
        mode = value.get("mode")
        if mode is None:
            return "load:rate" if value.get("sweep") == "auto" else "load:concurrency"
        return f"load:{mode}" if mode in ("concurrency", "rate", "trace", "offline") else str(mode)
    return f"load:{getattr(value, 'mode', '')}"


#: The union tags as they appear in validation error locations.
LOAD_TAGS = ("load:concurrency", "load:rate", "load:trace", "load:offline")

LoadSpec = Annotated[
    Annotated[ConcurrencyLoad, Tag("load:concurrency")]
    | Annotated[RateLoad, Tag("load:rate")]
    | Annotated[TraceLoad, Tag("load:trace")]
    | Annotated[OfflineLoad, Tag("load:offline")],
    Discriminator(
        _mode,
        custom_error_type="load_mode",
        custom_error_message="mode: expected concurrency, rate, trace or offline",
    ),
]
