"""A prepared workload: files read once, then requests drawn from them, seeded.

:class:`Workload` holds everything a run reads before it sends anything (the
tokenizer, the dataset, the trace, the shared prefixes), so a bad file stops
the run at the start with one line. Requests are then drawn per step from the
step's own random stream, so a step's requests do not depend on earlier steps.

The scenario loader has already checked that each file is there
(:mod:`loadgen.scenario.inputs`); what is wrong inside one is said by its
reader, with the field that named the file added here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario import IMAGE_APIS, EmpiricalDist, TraceLoad, WorkloadSpec
from loadgen.vocab import POOLING_APIS
from loadgen.workload.agent import AgentPlan, plan_tasks
from loadgen.workload.datasets import DatasetRow, RowSampler, load_dataset
from loadgen.workload.lengths import read_lengths_file, sample_lengths, sample_seconds
from loadgen.workload.media import Media, MediaMaker, image_file
from loadgen.workload.plan import Message, RequestSpec
from loadgen.workload.pooling import pooled
from loadgen.workload.prompts import Calibration, PromptMaker
from loadgen.workload.tools import OutputAsk, output_ask
from loadgen.workload.traces import TraceRow, read_trace

__all__ = ["SessionPlan", "Workload"]

#: Tokens per Mooncake hash block.
TRACE_BLOCK_TOKENS = 512


@dataclass(slots=True, frozen=True)
class SessionPlan:
    """One multi-turn session: each turn's new user length, max tokens, and the think time."""

    index: int
    user_tokens: tuple[int, ...]
    max_tokens: tuple[int, ...]
    think_ns: tuple[int, ...]  # after turn t's answer, before turn t + 1
    model: str | None = None  # target.models: the one model of every turn; None: target.model
    # -- users who stop (workload.cancel): per turn, (after_tokens, after_ns) or None
    cancel: tuple[tuple[int | None, int | None] | None, ...] = ()

    @property
    def turns(self) -> int:
        return len(self.user_tokens)


@dataclass(slots=True)
class Workload:
    """The scenario's workload, its files read and its shared pieces made."""

    spec: WorkloadSpec
    maker: PromptMaker
    dataset: list[DatasetRow] | None = None
    trace_path: str | None = None
    prefixes: list[str] = field(default_factory=list)
    _blocks: dict[int, str] = field(default_factory=dict)
    #: target.models: (name, weight) of each model requests pick from; empty: target.model
    models: tuple[tuple[str, float], ...] = ()
    # -- tool calls and structured output: the tools and schema, read and checked
    output: OutputAsk | None = None
    #: a pooling api (openai-embeddings, rerank): each request carries its inputs
    pooling: str | None = None
    #: synthetic images/audio (workload.images, workload.audio), None without
    media: MediaMaker | None = None
    #: a dataset row's images, by the row's line (read once, in prepare)
    row_media: dict[int, tuple[Media, ...]] = field(default_factory=dict)

    @classmethod
    def prepare(
        cls,
        spec: WorkloadSpec,
        *,
        chat: bool,
        trace: TraceLoad | None = None,
        calibration: Calibration | None = None,
        models: tuple[tuple[str, float], ...] = (),
        api: str | None = None,
    ) -> Workload:
        """Read the tokenizer and dataset, make the shared prefixes (ScenarioError if bad).

        ``models``: target.models' (name, weight) pairs, each request then picks one.
        ``api``: the target's; a pooling api's requests carry their inputs
        (:mod:`loadgen.workload.pooling`).
        """
        tokenizer = None
        if spec.tokenizer is not None:
            from loadgen.workload.tokenizer import PromptTokenizer

            tokenizer = PromptTokenizer.load(spec.tokenizer)
        maker = PromptMaker(chat, tokenizer, calibration)
        pooling = api if api in POOLING_APIS else None
        w = cls(spec=spec, maker=maker, models=models, pooling=pooling)
        if spec.dataset is not None:
            with _naming("workload.dataset.path", spec.dataset.path):
                w.dataset = load_dataset(spec.dataset, maker.count_text)
            w.row_media = _row_images(w.dataset, Path(spec.dataset.path), api)
        if spec.images is not None or spec.audio is not None:
            w.media = MediaMaker(spec.seed, spec.images, spec.audio)
        for name, file in _lengths_files(spec):  # read when planned: check them now
            with _naming(f"workload.{name}.file", file):
                read_lengths_file(Path(file))
        if trace is not None:
            w.trace_path = trace.trace
            with _naming("load.trace", trace.trace):  # check it now
                read_trace(trace.trace, trace.trace_format, window_s=trace.window_s)
        w.output = output_ask(spec)  # tools and schemas: read and checked now
        if spec.prefix is not None:
            length = spec.prefix.tokens or _share_tokens(spec)
            rng = np.random.default_rng([spec.seed, 1_000_003])
            w.prefixes = [maker.fragment(length, rng) for _ in range(spec.prefix.groups)]
        return w

    @property
    def prompt_length_source(self) -> str:
        if self.spec.prompt_as == "token_ids":
            return "token_ids"
        if self.dataset is not None and self.maker.tokenizer is None:
            return "dataset"
        return self.maker.source

    # -- requests ----------------------------------------------------------------------

    def requests(
        self,
        rng: np.random.Generator,
        n: int,
        *,
        start: int = 0,
        warmup: int = 0,
        rows: RowSampler | None = None,
        defer_media: bool = False,
    ) -> list[RequestSpec]:
        """``n`` requests numbered from ``start``; the first ``warmup`` are flagged warm-up.

        A dataset's rows come from ``rows`` when given (a stream that goes on
        across calls), else from a fresh draw. ``defer_media``: synthetic media are
        not made here; each request says which to make (``media_due``) and
        :meth:`with_media` (or a helper process) makes the very same bytes later.
        """
        if self.dataset is not None:
            return self._from_dataset(rng, n, start, warmup, rows, defer_media)
        spec = self.spec
        prompt_lens = sample_lengths(spec.prompt_tokens, n, rng)
        output_lens = sample_lengths(spec.output_tokens, n, rng)
        groups = (
            [int(g) for g in rng.integers(0, len(self.prefixes), size=n)] if self.prefixes else []
        )
        out = []
        for i, (p, o) in enumerate(zip(prompt_lens, output_lens, strict=True)):
            if spec.prompt_as == "token_ids":
                prompt: str | list[int] | list[Message] = _token_ids(p, spec, rng)
                planned = p
            else:
                prefix = self.prefixes[groups[i]] if groups else ""
                prompt, planned = self.maker.prompt(p, rng, prefix)
            out.append(RequestSpec(start + i, prompt, planned, o, warmup=i < warmup))
        if self.pooling is not None:
            out = [pooled(r, self.pooling, spec, self.maker, rng) for r in out]
        return self._with_media(out, rng, defer_media)

    def _with_media(
        self, specs: list[RequestSpec], rng: np.random.Generator, defer: bool = False
    ) -> list[RequestSpec]:
        """``specs`` with their synthetic media added (after any a dataset row brought),
        or with the key to make them (``defer``)."""
        if self.media is None or not specs:
            return specs
        draw = self.media.draw(rng)
        if defer:
            return [replace(s, media_due=(draw, s.index)) for s in specs]
        return [replace(s, media=s.media + self.media.made(draw, s.index)) for s in specs]

    def with_media(self, spec: RequestSpec) -> RequestSpec:
        """``spec`` with the synthetic media it is due made here (the same bytes as a
        helper process makes: :meth:`MediaMaker.made` is pure)."""
        if spec.media_due is None or self.media is None:
            return spec
        made = self.media.made(*spec.media_due)
        return replace(spec, media=spec.media + made, media_due=None)

    def endless(self, rng: np.random.Generator, *, start: int = 0) -> Iterator[RequestSpec]:
        """Requests numbered from ``start`` for as long as asked, planned 64 at a time.

        Synthetic media are not made here (that would hold the sending loop: a PNG
        costs ~0.2 s a megapixel): each request carries ``media_due`` and
        loadgen.execute.media_feed makes them in a helper process ahead of demand.
        """
        index = start
        rows = self.row_sampler(rng)
        while True:
            yield from self.requests(rng, 64, start=index, rows=rows, defer_media=True)
            index += 64

    def row_sampler(self, rng: np.random.Generator) -> RowSampler | None:
        if self.dataset is None or self.spec.dataset is None:
            return None
        return RowSampler(self.dataset, rng, self.spec.dataset)

    def _from_dataset(
        self,
        rng: np.random.Generator,
        n: int,
        start: int,
        warmup: int,
        sampler: RowSampler | None,
        defer_media: bool = False,
    ) -> list[RequestSpec]:
        sampler = sampler or self.row_sampler(rng)
        assert sampler is not None
        rows = sampler.take(n)
        drawn = sample_lengths(self.spec.output_tokens, n, rng)
        out = []
        for i, row in enumerate(rows):
            max_tokens = drawn[i] if row.output_tokens is None else row.output_tokens
            prompt = row.prompt
            if isinstance(prompt, str) and self.maker.chat:
                prompt = [{"role": "user", "content": prompt}]
            out.append(
                RequestSpec(
                    start + i,
                    prompt,
                    self.maker.count(prompt),
                    max_tokens,
                    warmup=i < warmup,
                    media=self.row_media.get(row.line, ()),
                )
            )
        return self._with_media(out, rng, defer_media)

    # -- traces ------------------------------------------------------------------------

    def trace_rows(self, trace: TraceLoad, time_scale: float) -> list[TraceRow]:
        return read_trace(
            trace.trace, trace.trace_format, time_scale=time_scale, window_s=trace.window_s
        )

    def trace_request(
        self, row: TraceRow, index: int, rng: np.random.Generator, context: str = ""
    ) -> RequestSpec:
        """A request of the row's lengths; Mooncake hash blocks become shared text, and
        an agent trace's call starts with ``context`` (the prompt of the call it follows)."""
        n = max(1, row.input_tokens)
        prefix = context
        if row.hash_ids:
            full = min(len(row.hash_ids), n // TRACE_BLOCK_TOKENS)
            prefix = " ".join(self._block(h) for h in row.hash_ids[:full])
        prompt, planned = self.maker.prompt(n, rng, prefix)
        return RequestSpec(index, prompt, planned, max(1, row.output_tokens))

    def _block(self, hash_id: int) -> str:
        text = self._blocks.get(hash_id)
        if text is None:
            rng = np.random.default_rng([self.spec.seed, 2_000_003, hash_id])
            text = self._blocks[hash_id] = self.maker.fragment(TRACE_BLOCK_TOKENS, rng)
        return text

    # -- sessions ----------------------------------------------------------------------

    def sessions(self, rng: np.random.Generator, n: int, *, start: int = 0) -> list[SessionPlan]:
        """``n`` session plans numbered from ``start``."""
        spec = self.spec.sessions
        assert spec is not None
        turns = sample_lengths(spec.turns, n, rng)
        out = []
        for i, t in enumerate(turns):
            users = sample_lengths(self.spec.prompt_tokens, t, rng)
            outs = sample_lengths(self.spec.output_tokens, t, rng)
            think = sample_seconds(spec.think_time_s, t, rng) if spec.think_time_s else [0.0] * t
            out.append(
                SessionPlan(
                    start + i,
                    tuple(users),
                    tuple(outs),
                    tuple(int(s * 1e9) for s in think),
                )
            )
        return out

    def agent_tasks(self, rng: np.random.Generator, n: int, *, start: int = 0) -> list[AgentPlan]:
        """``n`` agent task plans numbered from ``start`` (loadgen.workload.agent)."""
        spec = self.spec
        assert spec.agent is not None
        return plan_tasks(
            spec.agent,
            spec.prompt_tokens,
            spec.output_tokens,
            rng,
            n,
            start=start,
            prefixes=len(self.prefixes),
        )

    def turn_request(
        self,
        plan: SessionPlan,
        turn: int,
        history: list[Message],
        index: int,
        rng: np.random.Generator,
        *,
        warmup: bool = False,
    ) -> RequestSpec:
        """Turn ``turn`` of ``plan``: ``history`` (earlier turns and answers) plus a new message."""
        messages, planned = self.maker.user_turn(history, plan.user_tokens[turn], rng)
        stop = plan.cancel[turn] if plan.cancel else None
        tokens, ns = stop if stop is not None else (None, None)
        return RequestSpec(
            index,
            messages,
            planned,
            plan.max_tokens[turn],
            warmup=warmup,
            session=plan.index,
            turn=turn,
            keep_text=True,
            model=plan.model,
            cancel_after_tokens=tokens,
            cancel_after_ns=ns,
        )


def _row_images(
    rows: list[DatasetRow], dataset: Path, api: str | None = None
) -> dict[int, tuple[Media, ...]]:
    """Each row's images, read once; a path is relative to the dataset's folder
    (ScenarioError naming the dataset, the row's line and the resolved path; or that
    ``api`` sends no images, where a row has some: they would be dropped unsent)."""
    out: dict[int, tuple[Media, ...]] = {}
    for row in rows:
        if row.images:
            where = f"{dataset}:{row.line}: workload.dataset.path"
            if api is not None and api not in IMAGE_APIS:
                msg = (
                    f"{where}: images: target.api {api} sends no images "
                    f"(a row with images needs {' | '.join(IMAGE_APIS)}): drop them or the row"
                )
                raise ScenarioError(msg)
            paths = [(dataset.parent / p).resolve() for p in row.images]
            out[row.line] = tuple(image_file(p, where) for p in paths)
    return out


def _token_ids(n: int, spec: WorkloadSpec, rng: np.random.Generator) -> list[int]:
    """``n`` random ids above the usual special-token range (as vLLM's random dataset)."""
    low = min(100, spec.vocab_size - 1)
    return [int(i) for i in rng.integers(low, spec.vocab_size, size=n)]


def _share_tokens(spec: WorkloadSpec) -> int:
    """``prefix.share`` of the mean prompt length (the mean of a fixed-seed sample)."""
    assert spec.prefix is not None and spec.prefix.share is not None
    sample = sample_lengths(spec.prompt_tokens, 4096, np.random.default_rng([spec.seed, 3]))
    return max(1, round(float(np.mean(sample)) * spec.prefix.share))


def _lengths_files(spec: WorkloadSpec) -> list[tuple[str, str]]:
    """(field under workload, path) of each empirical lengths file."""
    turns = spec.sessions.turns if spec.sessions is not None else None
    dists = (
        ("prompt_tokens", spec.prompt_tokens),
        ("output_tokens", spec.output_tokens),
        ("sessions.turns", turns),
    )
    return [(n, d.file) for n, d in dists if isinstance(d, EmpiricalDist) and d.file is not None]


@contextmanager
def _naming(field_path: str, path: str) -> Iterator[None]:
    """A reader's error about ``path`` names the scenario field that gave it.

    ``/x/d.jsonl:3: not valid JSON`` becomes ``/x/d.jsonl:3: workload.dataset.path: not
    valid JSON``; a message that names the field already is left as it is.
    """
    try:
        yield
    except ScenarioError as exc:
        text = str(exc)
        if field_path in text:
            raise
        shown = next((p for p in (path, str(Path(path))) if text.startswith(p)), None)
        cut = -1 if shown is None else text.find(": ", len(shown))
        if cut < 0:
            raise ScenarioError(f"{field_path}: {text}") from None
        raise ScenarioError(f"{text[:cut]}: {field_path}{text[cut:]}") from None
