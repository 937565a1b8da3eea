"""The messages between the parent and its workers, typed.

Parent to worker: one of :data:`Command` (pickled: both ends run this code).
Worker to parent: a frame whose first byte says what follows (see
:mod:`loadgen.scale.worker`); the step's end is a :class:`StepDone` in JSON,
the only message with a body of fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from loadgen.summary import ClientHealth

__all__ = ["Clock", "Command", "Exit", "Go", "Step", "StepDone", "Stop"]


@dataclass(frozen=True, slots=True)
class Step:
    """Plan step ``index`` at ``mode``/``value``; keep share ``rank`` of ``ranks`` (-1: sit out)."""

    index: int
    mode: str
    value: float
    rank: int
    ranks: int


@dataclass(frozen=True, slots=True)
class Go:
    """Start the planned step at ``t0_ns``, in the worker's clock."""

    t0_ns: int


@dataclass(frozen=True, slots=True)
class Clock:
    """Answer at once with the worker's clock (the parent times the round trip)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """End the step in progress, keeping what finished."""


@dataclass(frozen=True, slots=True)
class Exit:
    """End the worker."""


Command = Step | Go | Clock | Stop | Exit


class StepDone(BaseModel):
    """A worker's report at the end of a step (``sat_out``: it had no share of it)."""

    sat_out: bool = False
    interrupted: bool = False
    health: ClientHealth | None = None
    #: (time in the worker's clock, requests in flight) samples
    in_flight: list[tuple[int, int]] = []
    http_versions: list[str] = []
