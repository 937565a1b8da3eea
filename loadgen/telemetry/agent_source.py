"""One GPU agent as the telemetry collector polls it: its clock offset and its samples.

Owns :class:`AgentSource`, one agent's state between polls (the URL requests
go to, the label written, the newest sample held, the clock offset), and what
is asked of it: ``/clock`` round trips for the offset
(:func:`~loadgen.telemetry.offset.best_offset`; a batch much noisier than the
estimate held keeps the tighter one), ``/health``, and ``/samples?since=``,
each row turned into a typed sample and its telemetry.jsonl line in loadgen's
clock. A failed request is raised; the collector makes it a gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadgen import clock
from loadgen.control import ControlClient, Limit
from loadgen.telemetry.answer import ok_reply
from loadgen.telemetry.offset import ClockProbe, OffsetEstimate, best_offset
from loadgen.telemetry.rows import GpuSample, HostSample, parse_sample

__all__ = ["LOOKBACK_NS", "AgentSource"]

#: how far before the first clock probe the first ``/samples`` asks from
LOOKBACK_NS = 5 * clock.NS_PER_S


@dataclass(slots=True)
class AgentSource:
    """One agent: what to ask, what to call it, and where its samples and clock stand."""

    url: str  # what requests go to (a password in it is sent)
    label: str  # what is written: the URL without userinfo
    since_ns: int | None = None  # agent monotonic of the newest sample we hold
    offset: OffsetEstimate | None = None
    failing: bool = False

    async def estimate(
        self, client: ControlClient, limit: Limit, tries: int
    ) -> dict[str, object] | None:
        """``tries`` clock probes into :attr:`offset`; the ``clock`` line to write (None when
        the probes gave no estimate or a noisy one, the tighter estimate kept)."""
        probes = []
        for _ in range(tries):
            t0 = clock.now_ns()
            response = ok_reply(await client.get(f"{self.url}/clock", limit))
            t1 = clock.now_ns()
            probes.append(ClockProbe(t0, int(response.json()["mono_ns"]), t1))
        new = best_offset(probes)
        old = self.offset
        if new is None:
            return None
        if old is not None and new.uncertainty_ns > 2 * old.uncertainty_ns + clock.NS_PER_MS:
            self.offset = OffsetEstimate(old.offset_ns, old.uncertainty_ns, new.measured_at_ns)
            return None  # a noisy batch (server under load): keep the tighter estimate
        self.offset = new
        if self.since_ns is None:
            # start a little in the past: the agent's ring already holds the
            # seconds before start(), which the first step window may include
            self.since_ns = max(p.agent_ns for p in probes) - LOOKBACK_NS
        return {
            "type": "clock",
            "source": self.label,
            "t_ns": new.measured_at_ns,
            "offset_ns": new.offset_ns,
            "uncertainty_ns": new.uncertainty_ns,
        }

    async def health(self, client: ControlClient, limit: Limit) -> Any:
        """The agent's ``/health`` answer."""
        return ok_reply(await client.get(f"{self.url}/health", limit)).json()

    async def samples(self, client: ControlClient, limit: Limit) -> Any:
        """The agent's ``/samples`` answer: the rows newer than :attr:`since_ns`."""
        params = {"since": self.since_ns or 0}
        return ok_reply(await client.get(f"{self.url}/samples", limit, params=params)).json()

    def take(self, row: dict[str, Any]) -> tuple[GpuSample | HostSample | None, dict[str, object]]:
        """One ``/samples`` row as a typed sample (None: a GPU row without an integer ``gpu``)
        and its telemetry.jsonl line, stamped in loadgen's clock; :attr:`since_ns` moves
        past it. The row is consumed."""
        assert self.offset is not None
        agent_t = int(row.pop("t_ns"))
        t_ns = self.offset.to_local(agent_t)
        sample = parse_sample(row, t_ns)
        kind = row.pop("kind", "gpu")
        line = {"type": kind, "source": self.label, "t_ns": t_ns, "agent_t_ns": agent_t}
        line["agent_wall_ns"] = row.pop("wall_ns", None)
        line.update(row)
        self.since_ns = max(self.since_ns or 0, agent_t)
        return sample, line
