"""The regression gate of ``loadgen compare --fail-if``, and its bootstrap significance test.

Owns the expression syntax, the field lookup on a step and the rule that
decides a failure (docs/reports.md):

    FIELD OP BOUND[UNIT]      e.g.  ttft_ms.p99 > +10%   throughput.output_tokens_per_s < -5%
                                    e2e_ms.mean > +20ms  requests.error_rate > 0.01

FIELD is a dotted path to a number of a step in summary.json; OP is one of
``> >= < <=``; BOUND is signed; ``%`` makes it relative to the baseline
(the first run), otherwise it is absolute in the field's unit (``ms`` may be
written for ``*_ms`` fields). The change, newest run minus baseline, is
compared with BOUND by OP: ``> +10%`` fails when the newest run is more than
10% higher. Where both runs have records and FIELD is a latency mean or
percentile, a seeded bootstrap gives a 95% interval of the difference; a
change whose interval includes 0 is "not significant" and does not fail.

Imports: numpy, loadgen.errors, loadgen.summary, loadgen.vocab, loadgen.report.samples.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.errors import ScenarioError
from loadgen.report.samples import SAMPLED_METRICS, RunSamples
from loadgen.summary import StepSummary
from loadgen.vocab import PERCENTILE_OF

__all__ = [
    "BOOTSTRAP_STATS",
    "Gate",
    "GateResult",
    "bootstrap_diff",
    "evaluate_gate",
    "parse_gate",
    "repeats_diff",
    "step_value",
]

#: Statistics the bootstrap can test (min, max and std are not tested).
BOOTSTRAP_STATS: dict[str, float | None] = {"mean": None, **PERCENTILE_OF}
CONFIDENCE = 0.95
MAX_BOOTSTRAP_SAMPLES = 20_000

_EXPR = re.compile(
    r"^\s*(?P<path>[A-Za-z_][\w]*(?:\.[\w]+)*)\s*(?P<op>>=|<=|>|<)\s*"
    r"(?P<bound>[+-]?\d+(?:\.\d+)?)\s*(?P<unit>%|ms)?\s*$"
)
_OPS = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}
_EXAMPLE = 'expected FIELD OP BOUND, e.g. "ttft_ms.p99 > +10%" or "e2e_ms.mean > +20ms"'


@dataclass(frozen=True, slots=True)
class Gate:
    text: str
    path: str
    op: str
    bound: float
    relative: bool

    def describe(self) -> str:
        return f"{self.path} {self.op} {self.bound:+g}{'%' if self.relative else ''}"


def _fields_of(model: Any) -> dict[str, Any]:
    return dict(getattr(model, "model_fields", {}))


def _check_path(path: str) -> None:
    """The path must lead to a number of StepSummary (anything under its free-form dicts:
    the error counts); a list (per-GPU telemetry, warnings) has no single number."""
    model: Any = StepSummary
    parts = path.split(".")
    for i, part in enumerate(parts):
        fields = _fields_of(model)
        if part not in fields:
            known = ", ".join(sorted(fields)) or "none"
            msg = f"unknown field {'.'.join(parts[: i + 1])!r} (known here: {known})"
            raise ValueError(msg)
        annotation = fields[part].annotation
        if getattr(annotation, "__origin__", None) is list:
            msg = f"{'.'.join(parts[: i + 1])!r} is a list, not a number"
            raise ValueError(msg)
        args = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
        inner = args[0] if args else annotation
        if getattr(inner, "__origin__", None) is dict or inner is dict:
            return  # requests.errors: checked against the data
        if _fields_of(inner):
            model = inner
            if i == len(parts) - 1:
                msg = f"{path!r} is a group, not a number; name one of its fields"
                raise ValueError(msg)
        elif i < len(parts) - 1:
            msg = f"{'.'.join(parts[: i + 1])!r} has no fields"
            raise ValueError(msg)
        elif inner not in (int, float):
            msg = f"{path!r} is not a number"
            raise ValueError(msg)


def parse_gate(text: str) -> Gate:
    """One ``--fail-if`` expression; a bad one is a one-line ScenarioError."""
    m = _EXPR.match(text)
    if m is None:
        msg = f"--fail-if {text!r}: {_EXAMPLE}"
        raise ScenarioError(msg)
    path, unit = m["path"], m["unit"]
    try:
        _check_path(path)
    except ValueError as exc:
        msg = f"--fail-if {text!r}: {exc}; {_EXAMPLE}"
        raise ScenarioError(msg) from None
    if unit == "ms" and not path.split(".")[0].endswith("_ms"):
        msg = f"--fail-if {text!r}: 'ms' applies to latency fields (*_ms); use % or a bare number"
        raise ScenarioError(msg)
    return Gate(text, path, m["op"], float(m["bound"]), unit == "%")


def step_value(step: StepSummary, path: str) -> float | None:
    """The number at a dotted path of the step's summary, or None where there is none."""
    node: Any = step.model_dump()
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, int | float):
        return None
    return float(node)


def _stat(values: np.ndarray[Any, Any], stat: str) -> np.ndarray[Any, Any]:
    q = BOOTSTRAP_STATS[stat]
    out: np.ndarray[Any, Any] = (
        values.mean(axis=-1) if q is None else np.percentile(values, q, axis=-1)
    )
    return out


def bootstrap_diff(
    base: Sequence[float] | npt.NDArray[np.float64],
    new: Sequence[float] | npt.NDArray[np.float64],
    stat: str,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of ``stat(new) - stat(base)``.

    Each side is resampled with replacement ``resamples`` times (seeded). A side
    with more than MAX_BOOTSTRAP_SAMPLES values is first subsampled to that many
    (without replacement), which widens the interval: conservative, never
    calls noise a regression.
    """
    rng = np.random.default_rng(seed)
    sides = []
    for values in (base, new):
        a = np.asarray(values, dtype=float)
        if len(a) > MAX_BOOTSTRAP_SAMPLES:
            a = rng.choice(a, MAX_BOOTSTRAP_SAMPLES, replace=False)
        sides.append(a)
    a, b = sides
    diffs = np.empty(resamples)
    chunk = max(1, 4_000_000 // max(len(a), len(b)))
    for start in range(0, resamples, chunk):
        k = min(chunk, resamples - start)
        ra = a[rng.integers(0, len(a), (k, len(a)))]
        rb = b[rng.integers(0, len(b), (k, len(b)))]
        diffs[start : start + k] = _stat(rb, stat) - _stat(ra, stat)
    tail = (1 - CONFIDENCE) / 2
    lo, hi = np.quantile(diffs, [tail, 1 - tail])
    return float(lo), float(hi)


@dataclass(frozen=True, slots=True)
class GateResult:
    gate: Gate
    load: str  # the step's load label
    base: float | None
    new: float | None
    change: float | None  # in the gate's terms: % when relative, else absolute
    ci: tuple[float, float] | None  # the same terms; None when not tested
    exceeded: bool  # the change passes the bound
    significant: bool | None  # None: not tested (no records, or a stat it cannot test)
    failed: bool

    def message(self) -> str:
        g = self.gate
        head = f"{g.describe()} at {self.load}"
        if self.change is None:
            why = "baseline is 0" if self.base == 0 else "no value in one of the runs"
            return f"{head}: not checked ({why})"
        unit = "%" if g.relative else ""
        text = f"{head}: {self.base:g} -> {self.new:g} ({self.change:+.2f}{unit}"
        if self.ci is not None:
            text += f", {CONFIDENCE:.0%} CI {self.ci[0]:+.2f}{unit} … {self.ci[1]:+.2f}{unit}"
        text += ")"
        if not self.exceeded:
            return f"{text}: within the bound"
        if self.significant is False:
            return f"{text}: beyond the bound but not significant (CI includes 0): not failed"
        tested = "" if self.significant else " (significance not tested)"
        over = abs(self.change - g.bound)
        return f"{text}: REGRESSION, beyond the bound by {over:.2f}{unit}{tested}"


def _significance(
    gate: Gate,
    steps: tuple[StepSummary, StepSummary],
    samples: tuple[RunSamples | None, RunSamples | None],
    base: float,
    seed: int,
    resamples: int,
) -> tuple[float, float] | None:
    metric, _, stat = gate.path.partition(".")
    base_samples, new_samples = samples
    if metric not in SAMPLED_METRICS or stat not in BOOTSTRAP_STATS:
        return None
    if base_samples is None or new_samples is None:
        return None
    if base_samples.profile != new_samples.profile:
        return None  # values made by different formulas (--allow-profile-mismatch)
    a = base_samples.step(steps[0].index).values(metric)
    b = new_samples.step(steps[1].index).values(metric)
    if len(a) < 2 or len(b) < 2:
        return None
    lo, hi = bootstrap_diff(a, b, stat, resamples=resamples, seed=seed)
    if gate.relative:
        return lo / abs(base) * 100, hi / abs(base) * 100
    return lo, hi


def repeats_diff(
    base: list[float], new: list[float], *, resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """A seeded bootstrap 95% interval of mean(new) - mean(base) over repeated runs' values."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(base, dtype=np.float64), np.asarray(new, dtype=np.float64)
    da = rng.choice(a, size=(resamples, len(a))).mean(axis=1)
    db = rng.choice(b, size=(resamples, len(b))).mean(axis=1)
    lo, hi = np.percentile(db - da, [2.5, 97.5])
    return float(lo), float(hi)


def evaluate_gate(
    gate: Gate,
    load: str,
    steps: tuple[StepSummary, StepSummary],
    samples: tuple[RunSamples | None, RunSamples | None],
    *,
    seed: int = 0,
    resamples: int = 1000,
    repeats: tuple[list[StepSummary], list[StepSummary]] | None = None,
) -> GateResult:
    """The gate on one matching step: (baseline step, newest step).

    With ``repeats`` (the matching step of every repeat on each side, when both
    were run with ``--repeat``), the values compared are the repeats' means and
    the interval is a bootstrap over the repeats: the run-to-run spread decides
    significance.
    """
    if repeats is not None and len(repeats[0]) >= 2 and len(repeats[1]) >= 2:
        return _gate_over_repeats(gate, load, repeats, seed, resamples)
    base, new = step_value(steps[0], gate.path), step_value(steps[1], gate.path)
    if base is None or new is None or (gate.relative and base == 0):
        return GateResult(gate, load, base, new, None, None, False, None, False)
    change = (new - base) / abs(base) * 100 if gate.relative else new - base
    exceeded = bool(_OPS[gate.op](change, gate.bound))
    ci = _significance(gate, steps, samples, base, seed, resamples)
    significant = None if ci is None else not (ci[0] <= 0 <= ci[1])
    failed = exceeded and significant is not False
    return GateResult(gate, load, base, new, change, ci, exceeded, significant, failed)


def _gate_over_repeats(
    gate: Gate,
    load: str,
    repeats: tuple[list[StepSummary], list[StepSummary]],
    seed: int,
    resamples: int,
) -> GateResult:
    a = [step_value(s, gate.path) for s in repeats[0]]
    b = [step_value(s, gate.path) for s in repeats[1]]
    av, bv = [x for x in a if x is not None], [x for x in b if x is not None]
    if len(av) < 2 or len(bv) < 2:
        return GateResult(gate, load, None, None, None, None, False, None, False)
    base, new = float(np.mean(av)), float(np.mean(bv))
    if gate.relative and base == 0:
        return GateResult(gate, load, base, new, None, None, False, None, False)
    change = (new - base) / abs(base) * 100 if gate.relative else new - base
    exceeded = bool(_OPS[gate.op](change, gate.bound))
    lo, hi = repeats_diff(av, bv, resamples=resamples, seed=seed)
    ci = (lo / abs(base) * 100, hi / abs(base) * 100) if gate.relative else (lo, hi)
    significant = not (ci[0] <= 0 <= ci[1])
    return GateResult(
        gate, load, base, new, change, ci, exceeded, significant, exceeded and significant
    )
