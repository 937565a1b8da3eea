"""How many worker processes ``load.workers`` means on this machine."""

from __future__ import annotations

import os

from loadgen.scenario import Scenario

__all__ = ["resolve_workers"]


def resolve_workers(sc: Scenario, *, ray: bool = False) -> int:
    """``load.workers`` as a number: ``auto`` is one per core this process may use,
    leaving one for the system and one for the built-in mock when it is the target.

    With Ray, ``auto`` is 0: one per CPU of the cluster, known once joined.
    """
    w = sc.load.workers
    if w != "auto":
        return w
    if ray:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1 - (1 if sc.target.is_mock else 0))
