"""Seeded fault choice: which fault, if any, a generation request gets.

Owns the fault plan built from ``--fault`` rules. Every rule draws its number
for every request, whether or not an earlier rule fired, so adding a rule does
not shift the others' choices. At most one fault per request: the first rule
(in ``--fault`` order) that fires wins.
"""

from __future__ import annotations

import random

from loadgen.mock.settings import FaultRule

__all__ = [
    "AFTER_RESPONSE",
    "CONTENT",
    "FRAMING",
    "MID_STREAM",
    "PRE_HEADER",
    "FaultPlan",
    "fault_position",
]

#: before any response byte
PRE_HEADER = frozenset({"reset", "http500", "http503", "http429"})
#: at the middle token of a stream (``error_event``: the engine fails there, then ``[DONE]``)
MID_STREAM = frozenset({"disconnect", "stall", "malformed", "error_event"})
#: how a whole stream is framed: events cut across chunks, no ``[DONE]``, a UTF-8 BOM first
FRAMING = frozenset({"split", "no_done", "bom"})
#: what a tool call or JSON answer says: its arguments or text cut short or of a wrong type
#: (loadgen.mock.structured); a request with neither is answered as usual
CONTENT = frozenset({"invalid_json"})
#: once the response is whole: the kept-alive connection is answered ``408`` and closed
#: before its next request is read (a server whose keep-alive timeout just ran out)
AFTER_RESPONSE = frozenset({"idle_408"})


class FaultPlan:
    """Picks the fault of each generation request, counting requests from 1."""

    def __init__(self, rules: tuple[FaultRule, ...], seed: int):
        self.rules = rules
        self.rng = random.Random(f"faults:{seed}")
        self.count = 0

    def pick(self) -> str | None:
        self.count += 1
        chosen = None
        for rule in self.rules:
            if rule.every:
                hit = self.count % rule.every == 0
            else:
                hit = self.rng.random() < rule.probability
            if hit and chosen is None:
                chosen = rule.kind
        return chosen


def fault_position(n_out: int) -> int:
    """Index of the token a mid-stream fault strikes before: half-way through."""
    return n_out // 2
