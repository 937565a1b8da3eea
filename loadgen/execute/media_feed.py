"""Synthetic media made off the event loop, ahead of a closed loop's demand.

A closed loop plans its requests as it goes (``Workload.endless``); each says
which synthetic images and audio it is due (``RequestSpec.media_due``) but
carries none. Making them on the sending loop held it: a 1 MP PNG costs
~0.2 s, a 448x336 JPEG ~10 ms, and every reply that came meanwhile was read
late. :class:`MediaFeed` keeps the media of the next requests in the making in
a helper process (:class:`MediaHelper`, :mod:`loadgen.execute.media_helper`),
in the stream's order; a request waits for its own only when the helper fell
behind the server. That wait comes before the request starts, so it is never
in the request's timing; the step reports its p99 (``media_wait_p99_ms``) and
flags loadgen as the bottleneck past ``SATURATION["media_wait_p99_ms"]``.
``MediaMaker.made`` is pure, so the bytes are those the loop would have made:
the same seed sends the same images.

The helper talks to this process through its stdin and stdout, read and
written by the event loop itself: no thread of this process touches the GIL
for it (a pool's feeder and manager threads did, and a thread preempted while
holding the GIL held the loop: +3-4 ms read lag p99 on a busy 2-core machine).

How far ahead: twice the step's users (at least 4), and no more requests'
media than :data:`MEDIA_AHEAD_BYTES` holds (estimated:
:func:`loadgen.scenario.planned.media_bytes`).

A helper that dies (killed, out of memory) ends the run: every request that
waits for its media, and every one asked for later, gets
:class:`MediaHelperDied`, a :class:`~loadgen.errors.LoadgenError` whose one
line names the process and how it ended (exit code or signal); the run
stops with it (exit 1), never sending requests without their images.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from loadgen.clock import now_ns
from loadgen.errors import LoadgenError
from loadgen.execute.media_helper import HEADER, HELPER_NICE, frame
from loadgen.scenario import media_bytes
from loadgen.workload import Media, MediaMaker, RequestSpec

__all__ = ["MEDIA_AHEAD_BYTES", "MediaFeed", "MediaHelper", "MediaHelperDied"]

#: media of requests not yet sent, made ahead, may hold at most this much memory
MEDIA_AHEAD_BYTES = 256 * 2**20
#: the tree loadgen is imported from: the helper imports the same one
_ROOT = str(Path(__file__).resolve().parents[2])
#: how long the helper may take to start (import numpy and Pillow)
START_TIMEOUT_S = 60.0
#: how long to wait, once its output has ended, for the helper's exit status
EXIT_WAIT_S = 2.0


class MediaHelperDied(LoadgenError):
    """The media helper process ended during the run: the message says how."""


def exit_text(returncode: int | None) -> str:
    """How a process ended, in words: ``exit code 1``, ``killed by SIGKILL``."""
    if returncode is None:
        return "still running, its output closed"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


class MediaHelper:
    """The process that makes a run's synthetic media: started before the first step
    that needs it, ended by :meth:`aclose` (or by the end of its stdin: this process
    gone)."""

    def __init__(self, maker: MediaMaker) -> None:
        self.maker = maker
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._by_key: dict[tuple[int, int], asyncio.Future[tuple[Media, ...]]] = {}
        self._asked: deque[asyncio.Future[tuple[Media, ...]]] = deque()  # in asking order
        #: why the helper is gone (set once its output ended during the run)
        self.died: str | None = None
        self._closing = False

    async def start(self) -> None:
        """Start the helper and wait until it has imported what it needs."""
        if self._proc is not None:
            return
        paths = [_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "loadgen.execute.media_helper",
            str(HELPER_NICE),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            limit=8 * 2**20,  # results are read in large pieces
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(frame(pickle.dumps(self.maker)))
        ready = await asyncio.wait_for(_read_frame(self._proc.stdout), START_TIMEOUT_S)
        if ready != b"ready":
            raise RuntimeError(f"the media helper did not start: {ready[:200]!r}")
        self._reader = asyncio.get_running_loop().create_task(self._read(self._proc.stdout))

    def submit(self, draw: int, index: int) -> asyncio.Future[tuple[Media, ...]]:
        """The media of request ``index`` (of the batch ``draw``), asked of the helper
        once (again: the same future) until :meth:`take` takes it."""
        if self.died is not None:
            raise MediaHelperDied(self.died)
        assert self._proc is not None and self._proc.stdin is not None, "start() first"
        key = (draw, index)
        future = self._by_key.get(key)
        if future is None:
            future = self._by_key[key] = asyncio.get_running_loop().create_future()
            self._asked.append(future)
            # its stdin closed (the helper died): the reader tells how it ended
            with contextlib.suppress(OSError, RuntimeError):
                self._proc.stdin.write(frame(pickle.dumps(key)))
        return future

    def take(self, draw: int, index: int) -> asyncio.Future[tuple[Media, ...]]:
        """The future of request ``index``'s media (asked for now if it was not)."""
        future = self.submit(draw, index)
        del self._by_key[(draw, index)]
        return future

    def forget(self, key: tuple[int, int]) -> None:
        """Nobody waits for ``key`` any more: its result, when it comes, is dropped."""
        future = self._by_key.pop(key, None)
        if future is not None:
            future.cancel()

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        """Each result answers the oldest question: the helper answers in order."""
        try:
            while True:
                _, media = pickle.loads(await _read_frame(stdout))
                future = self._asked.popleft()
                if not future.done():
                    future.set_result(media)
        except (asyncio.IncompleteReadError, OSError):
            if self._closing:
                return
            self.died = await self._death()
            while self._asked:
                future = self._asked.popleft()
                if not future.done():
                    future.set_exception(MediaHelperDied(self.died))
                    future.exception()  # retrieved: one nobody awaits logs nothing
            self._by_key.clear()

    async def _death(self) -> str:
        """What a dead helper's error says: its pid and how it ended."""
        proc = self._proc
        assert proc is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), EXIT_WAIT_S)
        return (
            f"the media helper process (pid {proc.pid}, making the run's synthetic images "
            f"and audio) died during the run ({exit_text(proc.returncode)})"
        )

    async def aclose(self) -> None:
        self._closing = True
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


async def _read_frame(stream: asyncio.StreamReader) -> bytes:
    (n,) = HEADER.unpack(await stream.readexactly(HEADER.size))
    return await stream.readexactly(n)


class MediaFeed:
    """The requests of ``source``, with the media each is due made ahead by ``helper``;
    iterate it for the requests, ``await made(spec)`` before sending one.

    Iterating is synchronous and cheap (it only asks the helper), so a closed
    loop's users share it as they share any iterator.
    """

    def __init__(self, source: Iterator[RequestSpec], helper: MediaHelper, users: int) -> None:
        self._source = source
        self._helper = helper
        per_request = media_bytes(helper.maker.images, helper.maker.audio)
        by_memory = int(MEDIA_AHEAD_BYTES // per_request) if per_request > 0 else 1 << 30
        self.ahead = max(1, min(max(4, 2 * users), by_memory))
        self._queued: deque[RequestSpec] = deque()
        self._ended = False
        #: how long each request waited for its media (ns; 0 when they were ready)
        self.waits_ns: list[int] = []

    def _top_up(self) -> None:
        while len(self._queued) < self.ahead and not self._ended:
            spec = next(self._source, None)
            if spec is None:
                self._ended = True
                return
            if spec.media_due is not None:
                self._helper.submit(*spec.media_due)
            self._queued.append(spec)

    async def fill(self) -> None:
        """Ask for the first ``ahead`` requests' media and wait until they are made."""
        self._top_up()
        due = [s.media_due for s in self._queued if s.media_due is not None]
        if due:
            await asyncio.gather(*(self._helper.submit(*k) for k in due))

    def __iter__(self) -> Iterator[RequestSpec]:
        return self

    def __next__(self) -> RequestSpec:
        self._top_up()
        if not self._queued:
            raise StopIteration
        spec = self._queued.popleft()
        self._top_up()
        return spec

    async def made(self, spec: RequestSpec) -> RequestSpec:
        """``spec`` with its media, waiting for the helper if it is behind."""
        if spec.media_due is None:
            return spec
        future = self._helper.take(*spec.media_due)
        if future.done():
            self.waits_ns.append(0)
            media = future.result()
        else:
            t0 = now_ns()
            media = await future
            self.waits_ns.append(now_ns() - t0)
        return replace(spec, media=spec.media + media, media_due=None)

    def close(self) -> None:
        """Drop what is still queued (a step that ended, or was cut short)."""
        for spec in self._queued:
            if spec.media_due is not None:
                self._helper.forget(spec.media_due)
        self._queued.clear()
