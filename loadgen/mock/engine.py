"""Schedulers that decide when each token is produced.

``BatchEngine`` is the continuous-batching model (vLLM-like step loop):
requests queue on arrival; each step admits waiting requests while
``running < max_num_seqs`` and the KV budget allows, lasts

    step_base_ms + decode_ms_per_seq * running + prefill_ms_per_token * admitted prompt tokens

and gives every running request one token at its end, written in one pass.
With a prefix cache (``cache.PrefixCache``) an admitted request's cached
leading blocks cost no prefill: only its uncached tokens count as admitted,
and the request learns how many were cached (``Gen.cache_hit``: its usage
reports them). The cache shares the KV budget: a running request holds its
prompt's blocks, and after each admission and each step the free cached blocks
are cut to what the running requests leave (``PrefixCache.fit``), so a long
context evicts the cached prefixes of others. When the KV budget runs out the
youngest running request is preempted (sent back to the head of the queue; it
frees its blocks and re-prefills prompt + generated tokens).
With a simulated draft model (``spec.SpecDecode``, ``--spec-decode K:RATE``)
each step gives a decoding request ``1 + accepted`` tokens instead of one, in
one event (``Gen.emit_group``); the step's duration is unchanged.
A request whose client goes away mid-stream leaves the batch at once
(``drop``): its slot and KV are free for the next step's admissions.

``FixedPacer`` is the fixed mode: request i gets token k at
``recv_ns + ttft + k * itl``, all absolute deadlines kept in one heap; each
wake-up writes every due token in one pass.

Both sleep only through ``timer.Timer``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque

from loadgen.mock.cache import PrefixCache, block_hashes
from loadgen.mock.gen import Gen
from loadgen.mock.metrics import Metrics
from loadgen.mock.settings import Profile
from loadgen.mock.spec import SpecDecode
from loadgen.mock.timer import SPIN_NS, Timer, spin_until

__all__ = ["BatchEngine", "FixedPacer", "step_ns"]

_pc = time.perf_counter_ns
# A step that ends this late after its deadline restarts the schedule from now
# instead of catching up with a burst of short steps.
MAX_LAG_NS = 2_000_000
# The pacer returns to the event loop after this many writes, so that a late
# pacer does not starve the reading of new requests.
YIELD_EVERY = 64


def step_ns(profile: Profile, running: int, prefill_tokens: int) -> int:
    """Step duration = step_base + decode_per_seq * running + prefill_per_token * admitted."""
    ms = (
        profile.step_base_ms
        + profile.decode_ms_per_seq * running
        + profile.prefill_ms_per_token * prefill_tokens
    )
    return int(ms * 1_000_000)


class BatchEngine:
    """Continuous batching in simulated-but-real time."""

    def __init__(
        self,
        profile: Profile,
        loop: asyncio.AbstractEventLoop,
        metrics: Metrics,
        cache: PrefixCache | None = None,
        spec: SpecDecode | None = None,
    ):
        self.profile = profile
        self.metrics = metrics
        self.cache = cache
        self.spec = spec
        self.waiting: deque[Gen] = deque()
        self.running: list[Gen] = []
        self.kv_used = 0
        self.step_end_ns = 0
        self.in_step = False
        self.timer = Timer(loop, self._on_timer)

    def gauges(self) -> tuple[int, int, float]:
        waiting = sum(1 for g in self.waiting if not g.dead)
        return len(self.running), waiting, self.kv_used / self.profile.kv_cache_tokens

    def submit(self, gen: Gen) -> None:
        if self.cache is not None:
            gen.blocks = block_hashes(gen.spec.tokens, self.cache.block_size)
        self.waiting.append(gen)
        if not self.in_step:
            self._begin_step(_pc())

    def close(self) -> None:
        self.timer.close()

    def drop(self, gen: Gen) -> None:
        """The client went away (``gen`` is dead): its slot and KV are freed now, not at
        the end of the step it is in; a waiting one is skipped at admission."""
        if gen in self.running:
            self.running = [g for g in self.running if g is not gen]
            self._free(gen)  # its KV, and its hold on the cached blocks it shares

    def _need(self, gen: Gen) -> int:
        """KV tokens a request needs to be admitted (with preemption: its context)."""
        if self.profile.preemption:
            return gen.spec.prompt_tokens + gen.emitted + 1
        return gen.spec.prompt_tokens + gen.n_out

    def _admit(self, now_ns: int) -> int:
        prefill = 0
        budget = self.profile.kv_cache_tokens
        while self.waiting and len(self.running) < self.profile.max_num_seqs:
            gen = self.waiting[0]
            if gen.dead:
                self.waiting.popleft()
                continue
            need = self._need(gen)
            if self.kv_used + need > budget and self.running:
                break
            self.waiting.popleft()
            gen.admit_ns = gen.admit_ns or now_ns  # its first scheduling ends its queue time
            gen.kv = need if not self.profile.preemption else need - 1
            self.kv_used += gen.kv
            prefill += self._uncached(gen)
            self.running.append(gen)
        return prefill

    def _free(self, gen: Gen) -> None:
        """A running request ends or is preempted: its KV and its hold on cached blocks go."""
        self.kv_used -= gen.kv
        gen.kv = 0
        if self.cache is not None and gen.blocks is not None:
            self.cache.release(gen.blocks)

    def _uncached(self, gen: Gen) -> int:
        """Tokens to prefill on admission (prompt, and output before a preemption), less hits."""
        tokens = gen.spec.prompt_tokens + gen.emitted
        cache = self.cache
        if cache is None or gen.blocks is None:
            return tokens
        hit = cache.lookup(gen.blocks, tokens)
        cache.acquire(gen.blocks)
        gen.cache_hit(hit, max(0, len(gen.blocks) * cache.block_size - hit))
        self.metrics.prefix_cache(tokens, hit)
        return tokens - hit

    def _make_room(self) -> None:
        """Every running request grows by one token; preempt the youngest until it fits."""
        if not self.profile.preemption:
            return
        budget = self.profile.kv_cache_tokens
        while len(self.running) > 1 and self.kv_used + len(self.running) > budget:
            gen = self.running.pop()
            self._free(gen)
            self.waiting.appendleft(gen)
            self.metrics.preemptions += 1

    def _begin_step(self, start_ns: int) -> None:
        prefill = self._admit(start_ns)
        self._make_room()
        if self.cache is not None:
            self.cache.fit(self.profile.kv_cache_tokens - self.kv_used)
        if not self.running:
            self.in_step = False
            return
        self.in_step = True
        self.step_end_ns = start_ns + step_ns(self.profile, len(self.running), prefill)
        self.timer.arm(self.step_end_ns)

    def _on_timer(self) -> None:
        if not self.in_step:
            return
        if self.step_end_ns - _pc() > SPIN_NS:
            self.timer.arm(self.step_end_ns)
            return
        spin_until(self.step_end_ns)
        self._end_step()

    def _end_step(self) -> None:
        keep = []
        grow = 0 if not self.profile.preemption else 1
        spec = self.spec
        for gen in self.running:
            n = 1
            if spec is not None and gen.emitted > 0 and not gen.dead:
                drafted, accepted = spec.draft(gen.n_out - gen.emitted - 1)
                gen.spec_step(drafted, accepted)
                n += accepted
            if gen.emit() if n == 1 else gen.emit_group(n):
                self._free(gen)
            else:
                gen.kv += grow * n
                self.kv_used += grow * n
                keep.append(gen)
        self.running = keep
        now = _pc()
        late = now - self.step_end_ns
        self._begin_step(self.step_end_ns if late < MAX_LAG_NS else now)


class FixedPacer:
    """Fixed TTFT/ITL per request, or the whole response at TTFT in burst mode."""

    def __init__(self, ttft_ms: float, itl_ms: float, burst: bool, loop: asyncio.AbstractEventLoop):
        self.ttft_ns = int(ttft_ms * 1_000_000)
        self.itl_ns = int(itl_ms * 1_000_000)
        self.burst = burst
        self.heap: list[tuple[int, int, Gen]] = []
        self.order = itertools.count()
        self.timer = Timer(loop, self._on_timer)

    def gauges(self) -> tuple[int, int, float]:
        return sum(1 for _, _, g in self.heap if not g.dead), 0, 0.0

    def drop(self, gen: Gen) -> None:
        """The client went away: ``gen`` is dead, no longer counted, and leaves the heap
        at its next deadline (it writes nothing more)."""

    def submit(self, gen: Gen) -> None:
        deadline = gen.sched_ns + self.ttft_ns
        heapq.heappush(self.heap, (deadline, next(self.order), gen))
        self.timer.arm(deadline)

    def close(self) -> None:
        self.timer.close()

    def _on_timer(self) -> None:
        heap = self.heap
        itl = self.itl_ns
        burst = self.burst
        now = _pc()
        budget = YIELD_EVERY
        while heap:
            deadline = heap[0][0]
            budget -= 1
            if budget < 0:  # let the loop read new requests, then carry on
                self.timer.arm(deadline)
                return
            if deadline > now:
                if deadline - now > SPIN_NS:
                    self.timer.arm(deadline)
                    return
                now = spin_until(deadline)
            _, order, gen = heapq.heappop(heap)
            if burst or itl == 0:
                gen.emit_all()
                continue
            # Behind schedule, every token already due goes out in one write.
            due = 1 + (now - deadline) // itl
            if not (gen.emit() if due == 1 else gen.emit_n(due)):
                heapq.heappush(heap, (deadline + due * itl, order, gen))
            now = _pc()
