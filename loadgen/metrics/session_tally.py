"""What a step's session metrics need of each call, kept compact as the calls finish.

:class:`SessionTally` keeps one row of integer columns per record that has a
session (``Record.session`` not None), every one of them: warm-up, ramp-up,
failed and interrupted calls too, since a session is measured only when every
call of it is. :class:`~loadgen.metrics.columns.StepColumns` adds to it as
records finish and merges it across workers; ``okrow`` ties a successful
measured call to its row of the step's successful-request columns, so the
session metrics read TTFT and the per-request SLA test from the same values the
step's own figures are made of. None is :data:`~loadgen.metrics.columns.NONE`.
"""

from __future__ import annotations

from array import array

import numpy as np
import numpy.typing as npt

from loadgen.records import Record

__all__ = ["NONE", "SessionTally"]

#: how a column holds None (loadgen.metrics.columns.NONE: one value, kept in step)
NONE = -(2**63)

Ints = npt.NDArray[np.int64]

#: the columns, one value per call
COLUMNS = (
    "session",
    "id",
    "agent",  # Record.agent; None (plain sessions) is the main agent
    "index",  # Record.call, else Record.turn (plain sessions)
    "parent",
    "depth",  # Record.agent_depth
    "start",
    "end",
    "ok",  # 1: ok or cut by the client on purpose (cancelled_by_client): not a failure
    "measured",  # 0: warm-up, ramp-up, or cut by an interrupt (error_kind cancelled)
    "prompt_tokens",
    "cached",  # Record.cached_tokens_server
    "truncated",  # Record.truncated_tokens
    "okrow",  # its row among the step's successful measured requests; None if not one
    "client_cancelled",
)


def _opt(v: int | None) -> int:
    return NONE if v is None else v


class SessionTally:
    """Every call of a session: :meth:`add` one record, :meth:`merge` another tally."""

    __slots__ = ("_cols",)

    def __init__(self) -> None:
        self._cols = {name: array("q") for name in COLUMNS}

    def __len__(self) -> int:
        return len(self._cols["session"])

    def add(self, r: Record, okrow: int | None) -> None:
        """``r`` (a record with a session); ``okrow``: its row among the step's successful
        measured requests, None when it is not one of them."""
        if r.session is None:
            return
        c = self._cols
        c["session"].append(r.session)
        c["id"].append(r.id)
        c["agent"].append(_opt(r.agent))
        c["index"].append(_opt(r.call if r.call is not None else r.turn))
        c["parent"].append(_opt(r.parent))
        c["depth"].append(_opt(r.agent_depth))
        c["start"].append(r.start_ns)
        c["end"].append(r.end_ns)
        c["ok"].append(1 if r.ok or r.cancelled_by_client else 0)
        interrupted = r.error_kind == "cancelled"
        c["measured"].append(0 if r.warmup or r.ramp or interrupted else 1)
        c["prompt_tokens"].append(r.prompt_tokens)
        c["cached"].append(_opt(r.cached_tokens_server))
        c["truncated"].append(r.truncated_tokens)
        c["okrow"].append(_opt(okrow))
        c["client_cancelled"].append(1 if r.cancelled_by_client else 0)

    def merge(self, other: SessionTally, ok_offset: int) -> None:
        """Append ``other``'s calls; ``ok_offset``: the successful rows this tally's step
        columns held before ``other``'s were appended after them."""
        for name, col in other._cols.items():
            if name == "okrow":
                self._cols[name].extend(v if v == NONE else v + ok_offset for v in col)
            else:
                self._cols[name].extend(col)

    def column(self, name: str) -> Ints:
        """A column as int64 (a copy: the tally may grow after)."""
        return np.array(self._cols[name], dtype=np.int64)
