"""SignalStop's rules, signal by signal, without sending one (the integration tests send them)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from loadgen.run.signals import FORCE_AFTER, SignalStop


def test_before_the_steps_a_signal_stops_the_set_up() -> None:
    seen: list[int] = []
    stop = SignalStop(seen.append)
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGHUP, None)
    assert seen == [signal.SIGHUP] and stop.first == signal.SIGHUP


def test_during_the_steps_the_first_cancels_later_ones_wait_and_the_third_forces() -> None:
    """Probe: two SIGINTs 0.02 s apart raised KeyboardInterrupt in the wind-down (no
    summary). The second is now noted only; the FORCE_AFTER-th still stops at once."""
    stop = SignalStop(None)

    async def main() -> list[str]:
        said: list[str] = []
        stop.begin(asyncio.current_task(), asyncio.get_running_loop())  # type: ignore[arg-type]
        stop(signal.SIGINT, None)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            said.append("cancelled")
        stop(signal.SIGINT, None)  # noted: the wind-down goes on
        said.append("wound down")
        stop.end()
        return said

    assert asyncio.run(main()) == ["cancelled", "wound down"]
    assert stop.count == 2 == FORCE_AFTER - 1 and stop.first == signal.SIGINT
    with pytest.raises(KeyboardInterrupt):  # the third, wherever the run is
        stop(signal.SIGINT, None)


def test_after_the_steps_a_signal_is_noted_so_the_reports_are_written() -> None:
    stop = SignalStop(None)
    stop.started = True  # the session ran and ended: the reports are being written
    stop(signal.SIGTERM, None)
    assert stop.count == 1 and stop.first == signal.SIGTERM
