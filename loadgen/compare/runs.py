"""The runs of ``loadgen compare``: read from their results directories.

Owns :class:`Run` (a results directory's summary and samples, or a
``--repeat`` directory's repeats with each compared figure their mean), the
figures compared (:data:`TABLE_METRICS`; a pooling run's:
:func:`loadgen.compare.pooling.table_metrics`), the
names runs are known by (folder names, made unique), the refusal to compare
runs measured under different metrics profiles, and the default output folder
beside the first run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loadgen.compare.gate import step_value
from loadgen.compare.pooling import table_metrics
from loadgen.compare.repeats import RepeatSpread
from loadgen.errors import ScenarioError
from loadgen.results import RunSamples, load_summary, read_run_samples
from loadgen.summary import StepSummary, Summary

__all__ = [
    "TABLE_METRICS",
    "ProfileMismatchError",
    "Run",
    "check_profiles",
    "default_out_dir",
    "load_runs",
    "profiles_text",
]

#: (field path, table title, unit) of every metric the comparison tables show.
TABLE_METRICS = (
    ("ttft_ms.p50", "TTFT p50", "ms"),
    ("ttft_ms.p99", "TTFT p99", "ms"),
    ("tpot_ms.p50", "TPOT p50", "ms"),
    ("tpot_ms.p99", "TPOT p99", "ms"),
    ("itl_ms.p50", "ITL p50", "ms"),
    ("itl_ms.p99", "ITL p99", "ms"),
    ("e2e_ms.p50", "E2E p50", "ms"),
    ("e2e_ms.p99", "E2E p99", "ms"),
    ("throughput.requests_per_s", "requests/s", "req/s"),
    ("throughput.goodput_requests_per_s", "goodput", "req/s"),
    ("throughput.output_tokens_per_s", "output tokens/s", "tok/s"),
    ("requests.error_rate", "error rate", "%"),
)


class ProfileMismatchError(ScenarioError):
    """The runs were summarised under different metrics profiles: their numbers measure
    different things (vLLM's TTFT counts from the request's start, loadgen's from the send)."""


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    path: Path
    summary: Summary  # with repeats: the first repeat's, each compared figure their mean
    samples: RunSamples | None
    repeats: list[Summary] | None = None  # ``loadgen run --repeat N``: every repeat's summary

    def repeat_steps(self, step: StepSummary) -> list[StepSummary]:
        """The step at the same index and load in every repeat (empty without repeats)."""
        return [
            r.steps[step.index]
            for r in self.repeats or []
            if len(r.steps) > step.index and r.steps[step.index].load == step.load
        ]


def check_profiles(runs: Sequence[Run], *, allow_mismatch: bool = False) -> None:
    """Raise :class:`ProfileMismatchError` when the runs' metrics profiles differ, unless
    ``allow_mismatch`` (``loadgen compare --allow-profile-mismatch``)."""
    profiles = {r.summary.metrics_profile for r in runs}
    if len(profiles) > 1 and not allow_mismatch:
        each = ", ".join(f"{r.name}: {r.summary.metrics_profile}" for r in runs)
        msg = (
            f"compare: the runs were measured under different metrics profiles ({each}), "
            "so their numbers are not comparable; run them with the same --metrics-profile, "
            "or pass --allow-profile-mismatch to compare them anyway"
        )
        raise ProfileMismatchError(msg)


def load_runs(paths: Sequence[Path], *, allow_profile_mismatch: bool = False) -> list[Run]:
    """Each results directory's summary and samples; names are the folder names, made unique.

    Runs under different metrics profiles are refused (:func:`check_profiles`) unless
    ``allow_profile_mismatch``.
    """
    runs: list[Run] = []
    seen: set[str] = set()
    for i, path in enumerate(paths):
        name = path.resolve().name or f"run{i + 1}"
        if name in seen:
            name = f"{name}#{i + 1}"
        seen.add(name)
        repeats = _load_repeats(path)
        if repeats is not None:
            runs.append(Run(name, path, _mean_summary(repeats), None, repeats))
            continue
        summary = load_summary(path)
        samples = read_run_samples(path, summary, exact_up_to=None)  # the bootstrap's: all
        runs.append(Run(name, path, summary, samples))
    check_profiles(runs, allow_mismatch=allow_profile_mismatch)
    return runs


def _load_repeats(path: Path) -> list[Summary] | None:
    """A ``--repeat`` results directory's repeats (None for a plain results directory)."""
    index = path / "repeats.json"
    if (path / "summary.json").exists() or not index.is_file():
        return None
    try:
        dirs = RepeatSpread.model_validate_json(index.read_bytes()).dirs
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{index}: not a repeats index: {exc}") from None
    return [load_summary(path / d) for d in dirs]


def _mean_summary(repeats: Sequence[Summary]) -> Summary:
    """The first repeat's summary, each table figure replaced by its mean over the repeats."""
    out = repeats[0].model_copy(deep=True)
    for step in out.steps:
        same = [
            r.steps[step.index]
            for r in repeats
            if len(r.steps) > step.index and r.steps[step.index].load == step.load
        ]
        paths = dict.fromkeys(p for p, _, _ in table_metrics(repeats, TABLE_METRICS))
        for path in dict.fromkeys([*(p for p, _, _ in TABLE_METRICS), *paths]):
            values = [step_value(s, path) for s in same]
            if len(values) == len(repeats) and all(v is not None for v in values):
                *parents, last = path.split(".")
                node: object = step
                for part in parents:
                    node = getattr(node, part)
                setattr(node, last, sum(v for v in values if v is not None) / len(values))
    return out


def profiles_text(runs: Sequence[Run]) -> str:
    """``vllm``, or ``A: loadgen, B: vllm`` when the runs differ (allowed by the caller)."""
    names = {r.summary.metrics_profile for r in runs}
    if len(names) == 1:
        return names.pop()
    return ", ".join(f"{r.name}: {r.summary.metrics_profile}" for r in runs)


def default_out_dir(runs: Sequence[Run]) -> Path:
    """``compare-<A>-vs-<B>/`` beside the first run (never the current directory)."""
    names = "-vs-".join(re.sub(r"[^\w.-]+", "_", r.name) for r in runs)
    return runs[0].path.resolve().parent / f"compare-{names}"[:120]
