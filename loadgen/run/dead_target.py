"""Stop a run at its start when the target is down: ``load.stop_on_errors``.

Until the first request of a run that reaches the server (an answer, even an
HTTP error), every request that fails to connect (``connect_error``:
refused, DNS, TLS; ``connect_timeout``) is counted. Once ``requests`` of them
have failed, or they have gone on for ``seconds`` (by the records' own
stamps), the target is taken to be down and the run stops, instead of
hammering a closed port for the whole sweep. A request that reaches the
server disarms the watch for the rest of the run: later failures are data.

Pure: it reads no clock (the records carry their stamps).
"""

from __future__ import annotations

from dataclasses import dataclass

from loadgen.clock import NS_PER_S
from loadgen.records import Record
from loadgen.scenario import StopOnErrors

__all__ = ["CONNECT_KINDS", "DeadTargetWatch"]

#: the error kinds that mean the request never reached a server
CONNECT_KINDS = frozenset({"connect_error", "connect_timeout"})


@dataclass(slots=True)
class DeadTargetWatch:
    """Counts connection failures before the first answer; :attr:`reason` once it trips."""

    rule: StopOnErrors | None
    failures: int = 0
    first_ns: int | None = None
    armed: bool = True
    reason: str | None = None

    def observe(self, rec: Record) -> bool:
        """Whether ``rec`` trips the watch (True once, on the record that trips it)."""
        if self.rule is None or not self.armed or self.reason is not None:
            return False
        if rec.error_kind == "cancelled":
            return False
        if rec.ok or rec.error_kind not in CONNECT_KINDS:
            self.armed = False  # the server answered: from here on, failures are data
            return False
        self.failures += 1
        stamp = rec.end_ns or rec.sent_ns
        if self.first_ns is None:
            self.first_ns = stamp
        waited = (stamp - self.first_ns) / NS_PER_S
        if self.failures < self.rule.requests and waited < self.rule.seconds:
            return False
        over = "" if self.failures >= self.rule.requests else f" over {waited:.1f} s"
        self.reason = (
            f"the first {self.failures} requests all failed to connect{over} "
            f"(load.stop_on_errors: {self.rule.requests} requests or {self.rule.seconds:g} s): "
            "the target looks down"
        )
        return True
