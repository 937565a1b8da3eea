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
percentile, a seeded bootstrap over requests (:mod:`loadgen.compare.resample`:
blocks of consecutive whole requests are drawn, never single gaps) gives a 95% interval of the
difference; a change whose interval includes 0 is "not significant" and does
not fail, and a side with too few requests to test the statistic
(:func:`~loadgen.compare.resample.untestable`) makes the step "inconclusive",
not failed. :func:`conclusions` is the one line per gate that ``compare``
prints first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.compare import resample
from loadgen.compare.resample import CONFIDENCE, PerRequest, per_request
from loadgen.errors import ScenarioError
from loadgen.results import SAMPLED_METRICS, RunSamples
from loadgen.summary import StepSummary
from loadgen.vocab import PERCENTILE_OF

__all__ = [
    "BOOTSTRAP_STATS",
    "Gate",
    "GateResult",
    "bootstrap_diff",
    "conclusions",
    "evaluate_gate",
    "parse_gate",
    "repeats_diff",
    "step_value",
]

#: Statistics the bootstrap can test (min, max and std are not tested).
BOOTSTRAP_STATS: dict[str, float | None] = {"mean": None, **PERCENTILE_OF}

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


def bootstrap_diff(
    base: PerRequest | Sequence[float] | npt.NDArray[np.float64],
    new: PerRequest | Sequence[float] | npt.NDArray[np.float64],
    stat: str,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """95% request-bootstrap interval of ``stat(new) - stat(base)``
    (:func:`loadgen.compare.resample.bootstrap_diff`; a plain sequence is one value a request)."""
    return resample.bootstrap_diff(base, new, BOOTSTRAP_STATS[stat], resamples=resamples, seed=seed)


@dataclass(frozen=True, slots=True)
class GateResult:
    gate: Gate
    load: str  # the step's load label
    base: float | None
    new: float | None
    change: float | None  # in the gate's terms: % when relative, else absolute
    ci: tuple[float, float] | None  # the same terms; None when not tested
    exceeded: bool  # the change passes the bound
    significant: bool | None  # None: not tested (no records, too few, a stat it cannot test)
    failed: bool
    untested: str | None = None  # why the records were too few to test significance

    @property
    def status(self) -> str:
        """One word or two: ``regression``, ``within the bound``, ``not significant``,
        ``too few requests`` (beyond the bound, untestable: not failed), ``not checked``."""
        if self.change is None:
            return "not checked"
        if self.failed:
            return "regression"
        if not self.exceeded:
            return "within the bound"
        return "too few requests" if self.untested else "not significant"

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
        if self.untested:
            return f"{text}: beyond the bound, inconclusive: {self.untested}; not failed"
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
) -> tuple[tuple[float, float] | None, str | None]:
    """(the interval in the gate's terms, None where not tested; why the records are too
    few to test, None where they are not). Blocks of whole requests are resampled
    (:func:`loadgen.compare.resample.gate_interval`)."""
    metric, _, stat = gate.path.partition(".")
    base_samples, new_samples = samples
    if metric not in SAMPLED_METRICS or stat not in BOOTSTRAP_STATS:
        return None, None
    if base_samples is None or new_samples is None:
        return None, None
    if base_samples.profile != new_samples.profile:
        return None, None  # values made by different formulas (--allow-profile-mismatch)
    q = BOOTSTRAP_STATS[stat]
    sides = (
        per_request(base_samples.step(steps[0].index), metric),
        per_request(new_samples.step(steps[1].index), metric),
    )
    ci, untested = resample.gate_interval(*sides, stat, q, resamples=resamples, seed=seed)
    if ci is None:
        return None, untested
    lo, hi = ci
    if gate.relative:
        return (lo / abs(base) * 100, hi / abs(base) * 100), None
    return (lo, hi), None


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
    ci, untested = _significance(gate, steps, samples, base, seed, resamples)
    significant = None if ci is None else not (ci[0] <= 0 <= ci[1])
    failed = exceeded and significant is not False and untested is None
    return GateResult(gate, load, base, new, change, ci, exceeded, significant, failed, untested)


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


def conclusions(results: Sequence[GateResult]) -> list[str]:
    """One line per gate, its steps in order: ``REGRESSION`` where a step failed,
    ``inconclusive`` where a step beyond the bound had too few requests to test, else
    ``no regression``; then each step's status and, where beyond the bound, its change.

    ``itl_ms.p99 > +5%: no regression (concurrency 1: within the bound; concurrency 8:
    not significant, +6.10%, 95% CI -2.00% … +14.30%)``
    """
    lines: list[str] = []
    for gate in dict.fromkeys(r.gate for r in results):
        mine = [r for r in results if r.gate == gate]
        if any(r.failed for r in mine):
            verdict = "REGRESSION"
        elif any(r.status == "too few requests" for r in mine):
            verdict = "inconclusive"
        else:
            verdict = "no regression"
        steps = "; ".join(f"{r.load}: {r.status}{_change_text(r)}" for r in mine)
        lines.append(f"{gate.describe()}: {verdict} ({steps or 'no step in common'})")
    return lines


def _change_text(r: GateResult) -> str:
    if r.change is None or not r.exceeded:
        return ""
    unit = "%" if r.gate.relative else ""
    text = f", {r.change:+.2f}{unit}"
    if r.ci is not None:
        text += f", {CONFIDENCE:.0%} CI {r.ci[0]:+.2f}{unit} … {r.ci[1]:+.2f}{unit}"
    return text
