"""Draws from the scenario's distributions: token counts and seconds.

Pure functions of (spec, n, rng): the same seed gives the same values, byte
for byte. Normal and lognormal token counts are rounded to the nearest
integer, then clamped to [min, max]: clamped, not redrawn, so the values
beyond a bound pile up on it (and the mean moves when a bound bites).
An empirical ``file`` is read here, when the workload is planned, and kept
while the file is unchanged.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario import (
    Distribution,
    EmpiricalDist,
    ExponentialSeconds,
    FixedDist,
    FixedSeconds,
    FloatDistribution,
    LognormalDist,
    LognormalSeconds,
    NormalDist,
    UniformDist,
    UniformSeconds,
)
from loadgen.workload.datasets import json_array_items, read_text

__all__ = ["describe", "read_lengths_file", "sample_lengths", "sample_seconds"]

#: Upper clamp of a token count with no ``max`` (keeps a wild lognormal tail in int64).
_NO_MAX = 2**31 - 1
_INTEGER = re.compile(r"[0-9]+")


def sample_lengths(
    spec: Distribution, n: int, rng: np.random.Generator, *, base_dir: Path | None = None
) -> list[int]:
    """Draw ``n`` token counts (integers >= 1) from ``spec``.

    fixed: ``value`` (no draw). uniform: integers in [min, max]. normal,
    lognormal: rounded draws clamped to [min, max] (clamped, not redrawn;
    no max: 2**31 - 1). empirical: ``values`` (or the file's) uniformly with
    replacement; ``histogram``: a bin chosen by its weight, then an integer
    uniformly in [e_i, e_{i+1}). A relative ``file`` is taken from
    ``base_dir`` when given.
    """
    match spec:
        case FixedDist():
            return [spec.value] * n
        case UniformDist():
            return _ints(rng.integers(spec.min, spec.max + 1, size=n))
        case NormalDist():
            return _round_clamp(rng.normal(spec.mean, spec.std, size=n), spec.min, spec.max)
        case LognormalDist():
            mu, sigma = spec.log_params()
            return _round_clamp(rng.lognormal(mu, sigma, size=n), spec.min, spec.max)
        case EmpiricalDist():
            return _empirical(spec, n, rng, base_dir)
    raise TypeError(f"not a token-count distribution: {spec!r}")  # pragma: no cover


def sample_seconds(spec: FloatDistribution, n: int, rng: np.random.Generator) -> list[float]:
    """Draw ``n`` durations in seconds (>= 0) from ``spec``; lognormal is clamped to [min, max]."""
    match spec:
        case FixedSeconds():
            return [float(spec.value)] * n
        case UniformSeconds():
            return _floats(rng.uniform(spec.min, spec.max, size=n))
        case ExponentialSeconds():
            return _floats(rng.exponential(spec.mean, size=n))
        case LognormalSeconds():
            mu, sigma = spec.log_params()
            high = np.inf if spec.max is None else spec.max
            return _floats(np.clip(rng.lognormal(mu, sigma, size=n), spec.min, high))
    raise TypeError(f"not a seconds distribution: {spec!r}")  # pragma: no cover


def describe(spec: Distribution | FloatDistribution) -> str:
    """One line for people, e.g. ``lognormal mean 512 std 256 [1, 4096]``."""
    match spec:
        case FixedDist():
            return f"fixed {spec.value}"
        case UniformDist():
            return f"uniform [{spec.min}, {spec.max}]"
        case NormalDist():
            return f"normal mean {_num(spec.mean)} std {_num(spec.std)} {_range(spec)}"
        case LognormalDist() | LognormalSeconds():
            if spec.mean is not None and spec.std is not None:
                params = f"mean {_num(spec.mean)} std {_num(spec.std)}"
            else:
                params = f"mu {_num(spec.mu or 0.0)} sigma {_num(spec.sigma or 0.0)}"
            unit = " s" if isinstance(spec, LognormalSeconds) else ""
            return f"lognormal {params} {_range(spec)}{unit}"
        case EmpiricalDist():
            return _describe_empirical(spec)
        case FixedSeconds():
            return f"fixed {_num(spec.value)} s"
        case UniformSeconds():
            return f"uniform [{_num(spec.min)}, {_num(spec.max)}] s"
        case ExponentialSeconds():
            return f"exponential mean {_num(spec.mean)} s"
    raise TypeError(f"not a distribution: {spec!r}")  # pragma: no cover


def read_lengths_file(path: Path) -> tuple[int, ...]:
    """The token counts in ``path``: one integer a line (blank lines and ``#`` comments
    allowed) or a JSON list of integers. Kept in memory until the file changes."""
    try:
        st = path.stat()
    except OSError as exc:
        raise ScenarioError(
            f"{path}: cannot read the lengths file: {exc.strerror or exc}"
        ) from None
    return _read_lengths(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=16)
def _read_lengths(path: Path, _mtime_ns: int, _size: int) -> tuple[int, ...]:
    text = read_text(path, "lengths file")
    values: list[int] = []
    if text.lstrip().startswith("["):
        for line, item in json_array_items(text, str(path)):
            if isinstance(item, bool) or not isinstance(item, int) or item < 1:
                raise ScenarioError(f"{path}:{line}: expected a positive integer, got {item!r}")
            values.append(item)
    else:
        for line, raw in enumerate(text.split("\n"), 1):
            token = raw.split("#", 1)[0].strip()
            if not token:
                continue
            if not _INTEGER.fullmatch(token) or int(token) < 1:
                raise ScenarioError(f"{path}:{line}: expected a positive integer, got {token!r}")
            values.append(int(token))
    if not values:
        raise ScenarioError(f"{path}: no lengths (expected positive integers, one a line)")
    return tuple(values)


def _empirical(
    spec: EmpiricalDist, n: int, rng: np.random.Generator, base_dir: Path | None
) -> list[int]:
    if spec.histogram is not None:
        edges = np.asarray(spec.histogram.edges, dtype=np.int64)
        weights = np.asarray(spec.histogram.counts, dtype=np.float64)
        bins = rng.choice(len(weights), size=n, p=weights / weights.sum())
        return _ints(rng.integers(edges[bins], edges[bins + 1]))
    if spec.values is not None:
        pool = np.asarray(spec.values, dtype=np.int64)
    else:
        path = Path(spec.file or "")
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        pool = np.asarray(read_lengths_file(path), dtype=np.int64)
    return _ints(pool[rng.integers(0, len(pool), size=n)])


def _round_clamp(draws: np.ndarray, low: int, high: int | None) -> list[int]:
    top = _NO_MAX if high is None else high
    return _ints(np.clip(np.rint(draws), low, top).astype(np.int64))


def _ints(values: np.ndarray) -> list[int]:
    out: list[int] = values.tolist()
    return out


def _floats(values: np.ndarray) -> list[float]:
    out: list[float] = values.astype(np.float64).tolist()
    return out


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def _range(spec: NormalDist | LognormalDist | LognormalSeconds) -> str:
    high = "inf)" if spec.max is None else f"{_num(spec.max)}]"
    return f"[{_num(spec.min)}, {high}"


def _describe_empirical(spec: EmpiricalDist) -> str:
    if spec.values is not None:
        return f"empirical {len(spec.values)} values in [{min(spec.values)}, {max(spec.values)}]"
    if spec.histogram is not None:
        edges = spec.histogram.edges
        return f"empirical histogram of {len(edges) - 1} bins in [{edges[0]}, {edges[-1]})"
    return f"empirical values from {spec.file}"
