"""A closed loop's synthetic media, made by the helper process ahead of demand: the same
bytes as made in line (same seed, same images), bounded lookahead, waits counted; a helper
that dies is one MediaHelperDied naming it and how it ended, for every request."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

from loadgen.errors import LoadgenError
from loadgen.execute.media_feed import (
    MEDIA_AHEAD_BYTES,
    MediaFeed,
    MediaHelper,
    MediaHelperDied,
    exit_text,
)
from loadgen.execute.monitor import SATURATION, LoopMonitor
from loadgen.scenario import load_scenario
from loadgen.scenario.planned import media_bytes
from loadgen.workload import Workload
from loadgen.workload.plan import RequestSpec, step_rng

MS = 1_000_000
IMAGES = (
    "{count: {dist: uniform, min: 1, max: 2}, width: {dist: fixed, value: 64},"
    " height: {dist: uniform, min: 16, max: 48}}"
)
T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """``main`` with a bound: a request whose answer is lost would hang, not fail."""
    return asyncio.run(asyncio.wait_for(main, 60))


def workload(tmp_path: Path, images: str = IMAGES, audio: str = "") -> Workload:
    path = tmp_path / "s.yaml"
    extra = f", audio: {audio}" if audio else ""
    path.write_text(
        f"workload: {{images: {images}{extra}}}\nload: {{concurrency: [4], requests_per_step: 8}}\n"
    )
    return Workload.prepare(load_scenario(path).workload, chat=True)


def stream(w: Workload) -> itertools.islice[RequestSpec]:
    return itertools.islice(w.endless(step_rng(w.spec.seed, 0, 0), start=2), 40)


def test_the_endless_stream_defers_media_and_they_are_those_made_in_line(tmp_path: Path) -> None:
    w = workload(tmp_path, audio="{seconds: {dist: fixed, value: 0.2}}")
    deferred = list(itertools.islice(w.endless(step_rng(w.spec.seed, 0, 0)), 64))
    assert all(s.media == () and s.media_due is not None for s in deferred)
    in_line = w.requests(step_rng(w.spec.seed, 0, 0), 64)  # the same draws, media made
    made = [w.with_media(s) for s in deferred]
    assert made == in_line
    assert all(m.media_due is None for m in made)
    assert len({m.b64 for s in made for m in s.media}) == sum(len(s.media) for s in made)


def test_the_helper_makes_the_same_bytes_in_the_same_order(tmp_path: Path) -> None:
    w = workload(tmp_path)
    assert w.media is not None
    expected = [w.with_media(s) for s in stream(w)]

    async def main() -> list[RequestSpec]:
        helper = MediaHelper(w.media)  # type: ignore[arg-type]
        await helper.start()
        try:
            feed = MediaFeed(stream(w), helper, users=3)
            await feed.fill()
            out = [await feed.made(s) for s in feed]
            assert feed.waits_ns and set(feed.waits_ns[: feed.ahead]) == {0}  # made ahead
            return out
        finally:
            await helper.aclose()

    got = run(main())
    assert got == expected and len(got) == 40


def test_a_request_taken_before_its_media_are_made_waits_and_gets_its_own(tmp_path: Path) -> None:
    """No fill: the first requests are asked for before the helper answered; after a feed is
    closed with requests queued, a new feed's answers are still its own."""
    w = workload(tmp_path)
    expected = [w.with_media(s) for s in stream(w)]

    async def main() -> tuple[list[RequestSpec], list[int]]:
        helper = MediaHelper(w.media)  # type: ignore[arg-type]
        await helper.start()
        try:
            first = MediaFeed(stream(w), helper, users=4)
            head = [await first.made(next(first)) for _ in range(3)]
            waits = list(first.waits_ns)
            first.close()  # 8 asked for, 3 taken: the other 5 answers are dropped
            second = MediaFeed(itertools.islice(stream(w), 3, None), helper, users=2)
            return head + [await second.made(s) for s in second], waits
        finally:
            await helper.aclose()

    got, waits = run(main())
    assert got == expected
    assert waits[0] > 0  # the first had to wait for the helper


def test_the_lookahead_is_twice_the_users_within_a_memory_bound(tmp_path: Path) -> None:
    small = workload(tmp_path)
    assert small.media is not None
    helper = MediaHelper(small.media)
    assert MediaFeed(iter(()), helper, users=1).ahead == 4
    assert MediaFeed(iter(()), helper, users=16).ahead == 32
    big = workload(
        tmp_path,
        "{width: {dist: fixed, value: 4000}, height: {dist: fixed, value: 4000}, format: png}",
    )
    assert big.media is not None
    per_request = media_bytes(big.media.images, None)
    assert 60e6 < per_request < 70e6  # 16 MP of noisy PNG, in base64
    ahead = MediaFeed(iter(()), MediaHelper(big.media), users=64).ahead
    assert ahead == int(MEDIA_AHEAD_BYTES // per_request) == 4


def test_a_long_wait_for_media_flags_loadgen() -> None:
    limit = int(SATURATION["media_wait_p99_ms"] * MS)
    ok = LoopMonitor().health([], media_waits_ns=[limit - 1] * 50)
    assert not ok.saturated and ok.media_wait_p99_ms is not None
    late = LoopMonitor().health([], media_waits_ns=[limit + 1] * 50)
    assert late.saturated and "for their images/audio" in late.warnings[0]
    assert LoopMonitor().health([]).media_wait_p99_ms is None  # no media: no figure


def test_numpy_seeding_is_unchanged_by_the_deferral(tmp_path: Path) -> None:
    """Deferring draws the same number from the step's stream: prompts stay the same."""
    w = workload(tmp_path)
    a = [s.prompt for s in itertools.islice(w.endless(np.random.default_rng(1)), 70)]
    b = [s.prompt for s in w.requests(np.random.default_rng(1), 64)]
    assert a[:64] == b


def test_a_dead_helper_fails_every_request_with_one_line_naming_it(tmp_path: Path) -> None:
    """Killed mid-run: the request waiting for its media, and every one asked for after,
    get MediaHelperDied (a LoadgenError: the run stops with its line), never a hang."""
    w = workload(tmp_path)

    async def main() -> tuple[str, str, int]:
        helper = MediaHelper(w.media)  # type: ignore[arg-type]
        await helper.start()
        try:
            feed = MediaFeed(stream(w), helper, users=2)
            await feed.made(next(feed))  # the helper works
            proc = helper._proc
            assert proc is not None
            proc.kill()
            await proc.wait()
            with pytest.raises(MediaHelperDied) as waiting:
                for _ in range(40):  # the queued ones fail, then the next ask does
                    await feed.made(next(feed))
            with pytest.raises(MediaHelperDied) as later:
                helper.submit(99, 0)
            return str(waiting.value), str(later.value), proc.pid
        finally:
            await helper.aclose()

    waiting, later, pid = run(main())
    assert waiting == later
    assert waiting == (
        f"the media helper process (pid {pid}, making the run's synthetic images and audio) "
        "died during the run (killed by SIGKILL)"
    )
    assert issubclass(MediaHelperDied, LoadgenError) and MediaHelperDied.exit_code == 1
    assert (exit_text(1), exit_text(-15), exit_text(None)) == (
        "exit code 1",
        "killed by SIGTERM",
        "still running, its output closed",
    )
