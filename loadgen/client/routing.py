"""Which endpoint a request goes to, when the target is several replicas of one model.

Owns :class:`Router` and the policies of ``target.routing``:

- ``round_robin``: endpoints in turn, 0, 1, ..., n-1, 0, ... (over n requests
  each endpoint gets one; any run's split is even to within one request).
  ``first`` moves the start, so several routers (worker processes) spread
  their odd requests.
- ``least_in_flight``: the endpoint with the fewest requests in flight (picked,
  not yet released); a tie goes to the first one at or after the round-robin
  pointer, so equal endpoints still take turns.
- ``session``: every turn of a multi-turn session goes to endpoint
  ``session % n`` (the server's prefix cache holds the conversation there).
  A step numbers its sessions 0, 1, 2, ..., so sessions take the endpoints in
  turn; no state is kept per session, however many a long step runs.
  Requests of no session go round robin.

Bookkeeping only, no I/O and no clock: the requester picks before it sends and
releases when the request has ended, whatever its outcome.
"""

from __future__ import annotations

__all__ = ["POLICIES", "Router"]

#: every value of ``target.routing``
POLICIES = ("round_robin", "least_in_flight", "session")


class Router:
    """Spreads requests over ``n`` endpoints by ``policy``."""

    __slots__ = ("_next", "in_flight", "n", "policy", "sent")

    def __init__(self, n: int, policy: str = "round_robin", *, first: int = 0) -> None:
        """``first``: where the round-robin pointer starts (worker k of a step starts at k,
        so the workers' odd requests fall on different endpoints)."""
        if n < 1:
            raise ValueError(f"a router needs at least one endpoint, got {n}")
        if policy not in POLICIES:
            raise ValueError(f"routing {policy!r}; expected one of {', '.join(POLICIES)}")
        self.n = n
        self.policy = policy
        #: requests picked and not yet released, per endpoint
        self.in_flight = [0] * n
        #: requests picked so far, per endpoint
        self.sent = [0] * n
        self._next = first % n  # the round-robin pointer

    def pick(self, session: int | None = None) -> int:
        """The endpoint for the next request (counted in flight until :meth:`release`);
        ``session``: the multi-turn session it belongs to, if any."""
        if self.policy == "least_in_flight":
            i = self._least()
        elif self.policy == "session" and session is not None:
            i = session % self.n
        else:
            i = self._in_turn()
        self.in_flight[i] += 1
        self.sent[i] += 1
        return i

    def release(self, endpoint: int) -> None:
        """The request sent to ``endpoint`` has ended."""
        self.in_flight[endpoint] -= 1

    def _in_turn(self) -> int:
        i = self._next
        self._next = (i + 1) % self.n
        return i

    def _least(self) -> int:
        n, load = self.n, self.in_flight
        best = start = self._next
        for k in range(1, n):
            j = (start + k) % n
            if load[j] < load[best]:
                best = j
        self._next = (best + 1) % n
        return best
