"""Before the first step: the results directory takes files, and telemetry starts.

Imports: loadgen.errors, loadgen.scenario, loadgen.target.options,
loadgen.telemetry lazily.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from loadgen.errors import OutputError
from loadgen.scenario.models import Scenario
from loadgen.target.options import tls_options

if TYPE_CHECKING:
    from loadgen.telemetry import TelemetryCollector

__all__ = ["prepare_out_dir", "start_telemetry"]


def prepare_out_dir(out: Path) -> None:
    """Make ``out`` and check it takes files: an OutputError (exit 2) otherwise."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"results directory {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".loadgen-write-check"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(f"results directory {out}: cannot write there: {reason}") from None


def start_telemetry(sc: Scenario, url: str, out_dir: Path) -> TelemetryCollector | None:
    """The collector of the scenario's agents and server /metrics; None when it names none."""
    spec = sc.telemetry
    server = spec.server_metrics
    if server == "target":
        server = url.rstrip("/") + "/metrics"
    if not spec.agents and not server:
        return None
    from loadgen.telemetry import TelemetryCollector

    token = os.environ.get(spec.token_env) if spec.token_env else None
    collector = TelemetryCollector(
        list(spec.agents),
        server,
        out_dir / "telemetry.jsonl",
        token,
        spec.interval_s,
        server_tls=tls_options(sc).context(),
    )
    collector.start()
    return collector
