"""The regression gate over compared runs: each gate on each step the baseline and the newest share.

Owns :func:`run_gates`, what ``loadgen compare --fail-if`` decides: the
steps of the first run (the baseline) and the last (the newest) matched by
load (:mod:`loadgen.compare.match`), each gate's rule applied to each pair
(:mod:`loadgen.compare.gate`), over the repeats when both runs have them.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.compare.gate import Gate, GateResult, evaluate_gate
from loadgen.compare.match import MATCH_TOLERANCE, matched_steps
from loadgen.compare.pooling import check_gates
from loadgen.compare.runs import Run

__all__ = ["run_gates"]


def run_gates(
    gates: Sequence[Gate],
    runs: Sequence[Run],
    *,
    seed: int = 0,
    resamples: int = 1000,
    tolerance: float = MATCH_TOLERANCE,
) -> list[GateResult]:
    """Every gate on every step the baseline (first run) and the newest (last run) share.

    The bootstrap resamples values made by the runs' metrics profile
    (:func:`~loadgen.compare.runs.load_runs` refuses runs under different profiles unless
    told). A gate on token timing where a run
    is a pooling one is a one-line ScenarioError.
    """
    check_gates(gates, [r.name for r in runs], [r.summary for r in runs])
    base, new = runs[0], runs[-1]
    pairs = [
        (label, (steps[0], steps[-1]))
        for label, steps in matched_steps([base, new], tolerance=tolerance)
        if steps[0] is not None and steps[-1] is not None
    ]
    return [
        evaluate_gate(
            gate,
            label,
            pair,
            (base.samples, new.samples),
            seed=seed,
            resamples=resamples,
            repeats=(base.repeat_steps(pair[0]), new.repeat_steps(pair[1]))
            if base.repeats and new.repeats
            else None,
        )
        for gate in gates
        for label, pair in pairs
    ]
