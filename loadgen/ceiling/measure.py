"""The client's ceiling: output tokens per CPU-second, measured against the built-in mock.

Owns ``loadgen calibrate``'s measurement (``benchmarks/client_throughput.py``
uses the same code). The mock runs on loopback in a child process pinned to one
CPU, this process (the client) on another, where affinity can be set; the
client then drives it through loadgen's real path (transport, SSE splitter,
adapter, records) in a closed loop, in two regimes (:data:`REGIMES`): bursts
(each response in one write) and one token per write (a live server's case).
The per-token regime climbs a ladder (:data:`LADDER`): the offered rate goes
up rung by rung (shorter gaps between a stream's tokens, a fresh mock each)
until :func:`rung_limit` names what stopped it: the client's core full (its
ceiling), the mock falling behind (the mock was the limit), or the client
reading tokens together and late with its core not full (it fell behind in
bursts, or other processes took its core).
The client's figure is only a ceiling where the mock is not itself the limit,
so the mock's CPU use is measured too (``/proc``, Linux), and, on h1, how many
tokens each socket read carried. ``ceiling_report`` turns the figures into
the estimate and the text.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from loadgen.client import ADAPTERS, Requester, RequestTimeouts, TlsOptions, make_transport
from loadgen.clock import NS_PER_MS, NS_PER_S, cpu_ns, now_ns
from loadgen.execute import Budget, closed_loop, loop_factory, quiet_gc, send_each
from loadgen.records import Record
from loadgen.scenario import WorkloadSpec
from loadgen.target import MockServer
from loadgen.workload import RequestSpec, Workload, step_rng

__all__ = [
    "CLIENT_LATE_MS",
    "FOLLOWS",
    "LADDER",
    "MOCK_BUSY",
    "PER_TOKEN_ITL_MS",
    "REGIMES",
    "TOGETHER",
    "Ceiling",
    "CeilingReport",
    "Pinning",
    "climb",
    "drive",
    "measure_ceiling",
    "mock_cpu_s",
    "mock_flags",
    "pin_one_core_each",
    "rated_rung",
    "rung_limit",
]

#: the regimes: bursts (each response in one write: what a batching server allows
#: at most), and one token per write (a live server's case, every token its own read)
REGIMES = ("burst", "per-token")

#: per-token: the mock's gap between tokens of a stream on the ladder's first rung.
#: 256 streams at 5 ms offer 51,200 tokens/s, which the mock (whose every write is a
#: Python ``send``) writes one by one on one core of the 2-vCPU VM; at 2 ms it falls
#: behind and writes some tokens together (benchmarks/per_token_pace.py,
#: docs/performance.md); the ladder finds where on the machine at hand
PER_TOKEN_ITL_MS = 5.0

#: the mock's share of its core from which it, not the client, is taken to be the limit
#: (and the client's share from which the client is)
MOCK_BUSY = 0.9

#: per-token: the offered rate of each rung, times the first rung's (a token every
#: ``itl_ms`` per stream); 5 ms at 256 streams: 51,200, 76,800, 102,400, 153,600, 204,800
#: tokens/s. With ``seconds`` per rung the regime takes at most 5 x seconds (and a
#: fresh mock per rung, about a second each)
LADDER = (1.0, 1.5, 2.0, 3.0, 4.0)

#: tokens per read above which tokens were read together, not one by one
TOGETHER = 1.5

#: read lag p99 (ms) from which the client, not the mock, read tokens together
CLIENT_LATE_MS = 1.0

#: delivered / offered below which the delivered rate no longer follows the offer
FOLLOWS = 0.9


@dataclass(slots=True, frozen=True)
class Pinning:
    """Where the client and the mock run: one CPU each, or None where that cannot be set."""

    cores: int  # CPUs this process may use
    client_cpu: int | None
    mock_cpu: int | None
    note: str  # one line for the user


@dataclass(slots=True)
class Ceiling:
    """What one regime measured, from the first measured send to the last end."""

    regime: str
    wall_s: float
    requests_ok: int
    failed: int
    output_tokens: int
    client_cpu_s: float
    mock_cpu_s: float | None = None  # None: not readable (no /proc)
    reads: int | None = None  # socket reads (h1 only)
    read_lag_p99_ms: float | None = None  # kernel receipt to read (h1 only)
    mismatches: int = 0  # responses whose token count differs from the server's
    itl_ms: float | None = None  # per-token: the mock's gap between a stream's tokens
    offered_tokens_per_s: float | None = None  # per-token: streams x 1000 / itl_ms

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def tokens_per_cpu_s(self) -> float:
        return self.output_tokens / self.client_cpu_s if self.client_cpu_s > 0 else 0.0

    @property
    def client_util(self) -> float:
        """The client's CPU-seconds per second (1.0: one core busy)."""
        return self.client_cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def mock_util(self) -> float | None:
        if self.mock_cpu_s is None or self.wall_s <= 0:
            return None
        return self.mock_cpu_s / self.wall_s

    @property
    def tokens_per_read(self) -> float | None:
        return self.output_tokens / self.reads if self.reads else None

    @property
    def mock_bound(self) -> bool:
        """Whether the mock's core was busy enough to be the limit, not the client."""
        util = self.mock_util
        return util is not None and util >= MOCK_BUSY

    @property
    def follows(self) -> bool:
        """Whether the delivered rate kept up with the offer (no offer: True)."""
        offered = self.offered_tokens_per_s
        return not offered or self.tokens_per_s >= FOLLOWS * offered


def rung_limit(c: Ceiling) -> str | None:
    """What stops the per-token ladder at this rung, or None to offer more.

    ``"failed"``: nothing succeeded; ``"client"``: the client's core was full
    (its ceiling); ``"late"``: tokens came several to a read while the client
    read late (read lag p99 at least :data:`CLIENT_LATE_MS`) with its core not
    full (it fell behind in bursts, or other processes took its core);
    ``"mock"``: tokens came several to a read with the client reading on
    time, or the delivered rate fell below
    :data:`FOLLOWS` of the offer with the client's core not full: the mock
    did not write them on time.
    """
    if c.requests_ok == 0:
        return "failed"
    if c.client_util >= MOCK_BUSY:
        return "client"
    if (c.tokens_per_read or 0.0) > TOGETHER:
        return "late" if (c.read_lag_p99_ms or 0.0) >= CLIENT_LATE_MS else "mock"
    if not c.follows:
        return "mock"
    return None


@dataclass(slots=True)
class CeilingReport:
    """Every regime's :class:`Ceiling` and the settings they ran with."""

    pinning: Pinning
    transport: str
    concurrency: int
    tokens: int
    seconds: float
    itl_ms: float  # per-token: the first rung's gap between a stream's tokens
    ceilings: list[Ceiling] = field(default_factory=list)  # per-token: the rung it rates
    ladder: list[Ceiling] = field(default_factory=list)  # per-token: every rung, in order
    stopped: str | None = None  # rung_limit of the ladder's last rung (None: its top)

    def regime(self, name: str) -> Ceiling | None:
        return next((c for c in self.ceilings if c.regime == name), None)


def climb(
    run_rung: Callable[[int, float], Ceiling], itl_ms: float, streams: int
) -> tuple[list[Ceiling], str | None]:
    """The per-token ladder: ``run_rung(k, gap_ms)`` at each rung of :data:`LADDER` from
    ``itl_ms`` until :func:`rung_limit` stops it; every rung and what stopped it."""
    ladder: list[Ceiling] = []
    for k, factor in enumerate(LADDER):
        gap = itl_ms / factor
        rung = run_rung(k, gap)
        rung.itl_ms, rung.offered_tokens_per_s = gap, streams * 1000 / gap
        ladder.append(rung)
        if (stopped := rung_limit(rung)) is not None:
            return ladder, stopped
    return ladder, None


def rated_rung(ladder: list[Ceiling]) -> Ceiling | None:
    """The rung that rates the client one token per write: the highest whose tokens came
    one per read and succeeded, else the first (its caveat says it flatters)."""
    ok = [c for c in ladder if c.requests_ok and (c.tokens_per_read or 0.0) <= TOGETHER]
    return ok[-1] if ok else (ladder[0] if ladder else None)


@contextlib.contextmanager
def pin_one_core_each() -> Iterator[Pinning]:
    """Pin this process to its first CPU and name its last for the mock; undo on exit."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
        yield Pinning(cores, None, None, "not pinned: this platform has no sched_setaffinity")
        return
    if len(allowed) < 2:
        yield Pinning(1, None, None, "not pinned: one CPU only, client and mock share it")
        return
    try:
        os.sched_setaffinity(0, {allowed[0]})
    except OSError as exc:
        yield Pinning(len(allowed), None, None, f"not pinned: {exc.strerror or exc}")
        return
    note = f"client pinned to CPU {allowed[0]}, mock to CPU {allowed[-1]}"
    try:
        yield Pinning(len(allowed), allowed[0], allowed[-1], note)
    finally:
        os.sched_setaffinity(0, set(allowed))


def mock_flags(regime: str, itl_ms: float = PER_TOKEN_ITL_MS) -> list[str]:
    """The mock's flags for ``regime`` (no TTFT in either)."""
    if regime == "burst":
        return ["--ttft-ms", "0", "--burst"]
    return ["--ttft-ms", "0", "--itl-ms", f"{itl_ms:g}"]


def mock_cpu_s(pid: int) -> float | None:
    """CPU-seconds (user + system) process ``pid`` has used, from ``/proc`` (None elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name: field 3 on
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _both(
    first: Callable[[Record], None], then: Callable[[Record], None]
) -> Callable[[Record], None]:
    def both(rec: Record) -> None:
        first(rec)
        then(rec)

    return both


async def drive(
    url: str,
    regime: str,
    *,
    transport: str = "h1",
    concurrency: int = 256,
    tokens: int = 128,
    seconds: float = 5.0,
    tls: TlsOptions | None = None,
    mock_pid: int | None = None,
    observe: Callable[[Record], None] | None = None,
) -> Ceiling:
    """Warm ``concurrency`` connections, then keep that many requests in flight ``seconds``.

    ``observe``: also handed each finished record, as a run's displays are
    (benchmarks/client_throughput.py ``--live``: what the live view costs).
    """
    client = make_transport(transport, limit=concurrency, connect_timeout_s=10, tls=tls)
    requester = Requester(
        client,
        ADAPTERS["openai-completions"],
        base_url=url,
        model="m",
        extra_body={"ignore_eos": True},
        headers={},
        timeouts=RequestTimeouts.from_seconds(60, 60, 120),
        run_id="ceiling",
    )
    spec = WorkloadSpec.model_validate(
        {
            "prompt_tokens": {"dist": "fixed", "value": 8},
            "output_tokens": {"dist": "fixed", "value": tokens},
        }
    )
    endless = Workload.prepare(spec, chat=False).endless(step_rng(0, 0, 0))
    done: list[Record] = []

    async def send(request: RequestSpec, scheduled: int | None) -> Record:
        return await requester.send(request, 0, scheduled)

    run = send_each(send, done.append if observe is None else _both(done.append, observe))
    try:
        await closed_loop(run, iter([next(endless) for _ in range(concurrency)]), concurrency)
        done.clear()
        if client.read_lag is not None:
            client.read_lag.take()
        mock0 = mock_cpu_s(mock_pid) if mock_pid is not None else None
        c0, t0 = cpu_ns(), now_ns()
        budget = Budget(duration_ns=int(seconds * NS_PER_S))
        await closed_loop(run, endless, concurrency, budget=budget)
        c1, t1 = cpu_ns(), now_ns()
        mock1 = mock_cpu_s(mock_pid) if mock_pid is not None else None
        lag = client.read_lag.take() if client.read_lag is not None else None
    finally:
        await client.aclose()
    ok = [r for r in done if r.ok]
    return Ceiling(
        regime=regime,
        wall_s=(t1 - t0) / NS_PER_S,
        requests_ok=len(ok),
        failed=len(done) - len(ok),
        output_tokens=sum(r.output_tokens for r in ok),
        client_cpu_s=(c1 - c0) / NS_PER_S,
        mock_cpu_s=mock1 - mock0 if mock0 is not None and mock1 is not None else None,
        reads=lag[0] if lag else None,
        read_lag_p99_ms=lag[1] / NS_PER_MS if lag else None,
        mismatches=sum(1 for r in ok if r.count_mismatch),
    )


def measure_ceiling(
    *,
    seconds: float = 5.0,
    transport: str = "h1",
    concurrency: int = 256,
    tokens: int = 128,
    itl_ms: float = PER_TOKEN_ITL_MS,
    regimes: tuple[str, ...] = REGIMES,
) -> CeilingReport:
    """Each regime against a fresh mock, one core each where possible.

    The per-token regime climbs :data:`LADDER` from ``itl_ms`` until
    :func:`rung_limit` stops it (or its top), a fresh mock per rung.
    """
    with pin_one_core_each() as pinning, tempfile.TemporaryDirectory() as tmp:
        report = CeilingReport(pinning, transport, concurrency, tokens, seconds, itl_ms)
        cpus = {pinning.mock_cpu} if pinning.mock_cpu is not None else None

        def one(regime: str, gap_ms: float, name: str) -> Ceiling:
            args = [*mock_flags(regime, gap_ms), "--model", "m"]
            server = MockServer(args, Path(tmp) / f"mock-{name}.log", cpus=cpus)
            with (
                server as url,
                quiet_gc(),
                asyncio.Runner(loop_factory=loop_factory()) as runner,
            ):
                return runner.run(
                    drive(
                        url,
                        regime,
                        transport=transport,
                        concurrency=concurrency,
                        tokens=tokens,
                        seconds=seconds,
                        mock_pid=server.pid,
                    )
                )

        for regime in regimes:
            if regime != "per-token":
                report.ceilings.append(one(regime, itl_ms, regime))
                continue
            report.ladder, report.stopped = climb(
                lambda k, gap: one("per-token", gap, f"per-token-{k}"), itl_ms, concurrency
            )
            if (rated := rated_rung(report.ladder)) is not None:
                report.ceilings.append(rated)
    return report
