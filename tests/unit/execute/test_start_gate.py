"""The start gate: a closed loop's starts pass a few per turn of the loop, in order."""

from __future__ import annotations

import asyncio

import pytest

from loadgen.execute.drivers import closed_loop
from loadgen.execute.start_gate import StartGate


async def _turns(gate: StartGate, starts: int) -> list[int]:
    """The loop turn in which each start passed, in the order they asked."""
    loop = asyncio.get_running_loop()
    turn = 0
    stop = False

    def tick() -> None:
        nonlocal turn
        turn += 1
        if not stop:
            loop.call_soon(tick)

    loop.call_soon(tick)
    passed: list[tuple[int, int]] = []

    async def start(i: int) -> None:
        await gate.turn()
        passed.append((i, turn))

    await asyncio.gather(*(start(i) for i in range(starts)))
    stop = True
    assert [i for i, _ in passed] == list(range(starts))  # in the order they asked
    return [t for _, t in passed]


def test_at_most_per_turn_starts_pass_in_one_turn_of_the_loop() -> None:
    turns = asyncio.run(_turns(StartGate(16), 40))
    per_turn = [turns.count(t) for t in sorted(set(turns))]
    assert per_turn == [16, 16, 8]
    assert sorted(set(turns)) == list(range(turns[0], turns[0] + 3))  # turn after turn


def test_a_start_alone_waits_one_turn() -> None:
    assert len(set(asyncio.run(_turns(StartGate(16), 3)))) == 1


def test_a_cancelled_start_gives_its_place_up() -> None:
    async def main() -> int:
        gate = StartGate(1)
        first = asyncio.ensure_future(gate.turn())
        second = asyncio.ensure_future(gate.turn())
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.wait_for(second, 1)
        return len(gate._waiting)

    assert asyncio.run(main()) == 0


def test_per_turn_must_be_positive() -> None:
    with pytest.raises(ValueError, match="per_turn 0"):
        StartGate(0)


def test_a_gated_closed_loop_keeps_its_concurrency_and_runs_every_job() -> None:
    async def main() -> tuple[list[int], int]:
        in_flight, most, done = 0, 0, []

        async def run(job: int, ramping: bool, scheduled: int | None) -> None:
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.001 * (job % 3))
            in_flight -= 1
            done.append(job)

        await closed_loop(run, iter(range(200)), 40, starts_per_turn=4)
        return sorted(done), most

    done, most = asyncio.run(main())
    assert done == list(range(200)) and most == 40
