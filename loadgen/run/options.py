"""How a run is asked for beyond its scenario: where it writes, what it shows, who sends."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RunOptions"]


@dataclass(slots=True)
class RunOptions:
    out_dir: Path
    quiet: bool = False
    progress: bool | None = None  # None: only on a terminal
    reports: bool = True  # steps.csv, report.md, report.html and plots at the end
    metrics_profile: str = "loadgen"  # whose metric definitions (loadgen.metrics.profiles)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    #: called with the number of each signal that stops the run (SIGINT, SIGTERM, SIGHUP)
    on_signal: Callable[[int], None] | None = None
    #: write over a results directory that already holds a run (``--replace``)
    replace: bool = False
    #: workers as Ray actors: ``local``, ``auto`` or a cluster address (loadgen.scale.ray_pool)
    ray: str | None = None
    # -- live view
    #: the live terminal view: None on a terminal outside CI and -q; False: ``--no-live``
    live: bool | None = None
