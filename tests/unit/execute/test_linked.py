"""linked_loop: a call never starts before the calls it waits for ended (plus their gap)."""

from __future__ import annotations

import asyncio

from loadgen.clock import now_ns
from loadgen.execute.linked import linked_loop
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec
from loadgen.workload.trace_links import Waits

MS = 1_000_000


def spec(i: int) -> RequestSpec:
    return RequestSpec(i, "x", 1, 1)


def replay(
    offsets_ms: list[int],
    waits: list[Waits],
    took_ms: dict[int, int],
    *,
    failing: frozenset[int] = frozenset(),
    cap: int | None = None,
    indices: list[int] | None = None,
) -> tuple[int, dict[int, Record], int]:
    """Run the loop with a fake send that takes ``took_ms[i]``; (t0, records by id, peak)."""
    records: dict[int, Record] = {}
    flight = [0, 0]

    async def send(s: RequestSpec, scheduled: int | None) -> Record:
        flight[0] += 1
        flight[1] = max(flight)
        start = now_ns()
        await asyncio.sleep(took_ms.get(s.index, 5) / 1000)
        flight[0] -= 1
        ok = s.index not in failing
        return Record(
            0,
            s.index,
            False,
            "r",
            1,
            1,
            scheduled_ns=scheduled,
            start_ns=start,
            end_ns=now_ns(),
            ok=ok,
        )

    async def main() -> int:
        t0 = now_ns() + 20 * MS
        specs = [spec(i) for i in (indices or range(len(offsets_ms)))]
        await linked_loop(
            send,
            lambda r: records.__setitem__(r.id, r),
            specs,
            [o * MS for o in offsets_ms],
            waits,
            max_concurrency=cap,
            t0_ns=t0,
        )
        return t0

    t0 = asyncio.run(main())
    return t0, records, flight[1]


def test_a_call_waits_for_its_dependency_and_the_gap() -> None:
    # 0 takes 60 ms; 1 is due at 10 ms by the trace, but follows 0 with a 15 ms tool gap;
    # 2 follows 1 but its offset (300 ms) is later than 1's end + gap: the offset holds
    offsets = [0, 10, 300, 5]
    waits: list[Waits] = [(), ((0, 15 * MS),), ((1, 1 * MS),), ()]
    t0, rec, _ = replay(offsets, waits, {0: 60, 1: 20})
    assert rec[0].scheduled_ns == t0 and rec[3].scheduled_ns == t0 + 5 * MS  # roots: offsets
    assert rec[1].scheduled_ns == rec[0].end_ns + 15 * MS  # later than its offset
    assert rec[1].start_ns >= rec[0].end_ns + 15 * MS
    assert rec[2].scheduled_ns == t0 + 300 * MS and rec[2].start_ns >= t0 + 300 * MS
    assert rec[2].start_ns >= rec[1].end_ns


def test_a_join_waits_for_every_dependency() -> None:
    # 3 follows 0 and joins 1 and 2 (sub-agents of different lengths)
    waits: list[Waits] = [(), ((0, 0),), ((0, 0),), ((0, 5 * MS), (1, 2 * MS), (2, 2 * MS))]
    _, rec, _ = replay([0, 1, 1, 2], waits, {0: 10, 1: 80, 2: 30})
    last = max(rec[i].end_ns for i in (1, 2))
    assert rec[3].scheduled_ns == max(rec[0].end_ns + 5 * MS, last + 2 * MS)
    assert rec[3].start_ns >= rec[1].end_ns + 2 * MS


def test_a_failed_dependency_still_lets_the_next_call_go() -> None:
    _, rec, _ = replay([0, 1], [(), ((0, 0),)], {}, failing=frozenset({0}))
    assert not rec[0].ok and rec[1].ok and rec[1].start_ns >= rec[0].end_ns


def test_waits_by_request_index_and_a_cap() -> None:
    """A worker's share holds indices 4, 7, 9; a wait on one it does not hold is ignored."""
    waits: list[Waits] = [(), ((4, 0),), ((3, 0),)]
    t0, rec, peak = replay([0, 1, 2], waits, {4: 40, 7: 40, 9: 40}, cap=1, indices=[4, 7, 9])
    assert set(rec) == {4, 7, 9} and peak == 1
    assert rec[7].start_ns >= rec[4].end_ns
    assert rec[9].scheduled_ns == t0 + 2 * MS  # its wait (index 3) is not here: a root
