"""Before the first step: the results directory is new (or replaced) and takes files;
telemetry starts, and loadgen's own metrics are served.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from loadgen.errors import OutputError
from loadgen.scenario import Scenario, dcgm_metrics_url
from loadgen.target import tls_options

if TYPE_CHECKING:
    from loadgen.prom_endpoint import Exporter
    from loadgen.telemetry import TelemetryCollector

__all__ = ["RUN_FILES", "prepare_out_dir", "refuse_used_dir", "start_exporter", "start_telemetry"]

#: files that say a directory holds a run: the first one found is named
MARKS = ("summary.json", "records.jsonl", "repeats.json")

#: a run's own files, removed by ``--replace`` (plots/*.png: the report rewrites them)
RUN_FILES = (
    *MARKS,
    "telemetry.jsonl",
    "scenario.yaml",
    "steps.csv",
    "report.md",
    "report.html",
    "repeats.md",
)


def refuse_used_dir(out: Path, replace: bool) -> None:
    """An OutputError (exit 2) when ``out`` already holds a run and ``replace`` is not set."""
    if replace or not out.is_dir():
        return
    found = next((name for name in MARKS if (out / name).exists()), None)
    if found is not None:
        raise OutputError(
            f"results directory {out}: already holds a run ({found}); "
            "pass --replace to overwrite it, or --out a new directory"
        )


def prepare_out_dir(out: Path, replace: bool = False) -> None:
    """Make ``out`` and check it takes files: an OutputError (exit 2) otherwise.

    A directory that holds a run is refused, or with ``replace`` cleared of the
    run's files (so none of the old run is read back as the new one's).
    """
    if out.exists() and not out.is_dir():
        raise OutputError(f"results directory {out}: exists and is not a directory")
    refuse_used_dir(out, replace)
    try:
        out.mkdir(parents=True, exist_ok=True)
        if replace:
            for name in RUN_FILES:
                (out / name).unlink(missing_ok=True)
        probe = out / ".loadgen-write-check"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(f"results directory {out}: cannot write there: {reason}") from None


def start_telemetry(sc: Scenario, url: str, out_dir: Path) -> TelemetryCollector | None:
    """The collector of the scenario's agents, server /metrics, dcgm-exporters and
    Prometheus queries; None when it names none."""
    spec = sc.telemetry
    server = spec.server_metrics
    if server == "target":
        server = url.rstrip("/") + "/metrics"
    if not spec.agents and not server and not spec.dcgm and spec.prometheus is None:
        return None
    from loadgen.redact import strip_userinfo
    from loadgen.telemetry import PromQueries, TelemetryCollector

    token = os.environ.get(spec.token_env) if spec.token_env else None
    prom = spec.prometheus
    queries = None
    if prom is not None:
        prom_token = os.environ.get(prom.token_env) if prom.token_env else None
        label = strip_userinfo(prom.url)
        queries = PromQueries(prom.url, label, dict(prom.queries), prom.step_s, prom_token)
    collector = TelemetryCollector(
        list(spec.agents),
        server,
        out_dir / "telemetry.jsonl",
        token,
        spec.interval_s,
        server_tls=tls_options(sc).context(),
        dcgm=[dcgm_metrics_url(u) for u in spec.dcgm],
        prometheus=queries,
    )
    collector.start()
    return collector


def start_exporter(sc: Scenario, run_id: str) -> Exporter | None:
    """``telemetry.serve_metrics``: the exporter, serving already; None when not asked for."""
    spec = sc.telemetry
    if spec.serve_metrics is None:
        return None
    from loadgen.prom_endpoint import Exporter
    from loadgen.scenario import parse_listen

    host, port = parse_listen(spec.serve_metrics)
    env = spec.serve_metrics_token_env
    token = os.environ.get(env) if env else None  # set and not empty: checked at load
    return Exporter.start(
        host,
        port,
        token=token,
        linger_s=spec.serve_metrics_linger_s,
        run_id=run_id,
        scenario=sc.name,
        model=sc.target.model,
    )
