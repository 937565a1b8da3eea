"""A results directory as an MLflow run: ``loadgen run --mlflow``, ``loadgen export --mlflow``.

:func:`open_tracking` opens the tracking store before anything runs (a missing
extra, a store that cannot be opened: one line, exit 2, before a long run
rather than after it); :meth:`Tracker.log` then logs a finished results
directory, read from its files (the live run and an old one go the same way):

- experiment: ``MLFLOW_EXPERIMENT_NAME`` when set, else the scenario's name;
  the run is named after the results directory, starts and ends at the run's
  wall times (the summary's clock anchor) and ends FINISHED, or KILLED when the
  run was interrupted;
- parameters: scenario.yaml flattened (:func:`loadgen.export.params.flatten`,
  secrets redacted);
- metrics: every number of each step's steps.csv row (``ttft_ms_p99``,
  ``output_tokens_per_s``, ``error_rate``, ...; a boolean as 0/1) with the step
  index as MLflow's integer ``step`` and the step's end as its time; the load
  itself as the metric ``load_value``; the sweep's answer as ``verdict_*``
  metrics (step 0);
- tags: ``loadgen.verdict`` (``missed`` when a step missed its SLA, else
  ``inconclusive`` when one was, else ``met``; ``none`` without bounds),
  ``loadgen.verdict_text`` (the sentence the console prints),
  ``loadgen.max_passing``, and per step ``loadgen.step.<i>.verdict`` and
  ``loadgen.step.<i>.load``; the run id, version, API, model, target URL,
  metrics profile and results directory;
- artifacts: summary.json, scenario.yaml, steps.csv, report.md, report.html,
  repeats.json and repeats.md, plots/ and parquet/ where present (not
  records.jsonl: the Parquet export is the place for rows).

A ``--repeat`` folder becomes a parent run (its repeats.json, repeats.md and
the scenario) with one child run per repeat.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from loadgen.errors import OutputError, ScenarioError
from loadgen.export.extras import need
from loadgen.export.params import flatten
from loadgen.export.parquet import repeat_folders
from loadgen.redact import redact_text, strip_userinfo
from loadgen.report import steps_table
from loadgen.results import load_summary
from loadgen.summary import Summary

__all__ = ["ARTIFACTS", "Tracker", "open_tracking", "overall_verdict"]

#: files of a results directory logged as artifacts, where present; then plots/, parquet/
ARTIFACTS = (
    "summary.json",
    "scenario.yaml",
    "steps.csv",
    "report.md",
    "report.html",
    "repeats.json",
    "repeats.md",
)
_FOLDERS = ("plots", "parquet")
_BATCH = 100  # MLflow takes at most 100 params or tags, 1000 metrics, in one batch


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_text(f"{type(exc).__name__}: {text[0] if text else ''}")


def _is_folder_store(uri: str) -> bool:
    return uri.startswith("file:") or "://" not in uri


def open_tracking(uri: str | None, experiment: str) -> Tracker:
    """The tracking store at ``uri`` (None: MLflow's own default or MLFLOW_TRACKING_URI)
    and the experiment runs go into, created if it is new."""
    need("mlflow", "mlflow", "--mlflow")
    for name in ("mlflow", "alembic"):  # their INFO lines (creating tables...) are noise here
        logging.getLogger(name).setLevel(logging.WARNING)
    import mlflow
    from mlflow.tracking import MlflowClient

    if uri is not None and _is_folder_store(uri):
        # a folder store named on the command line is what was asked for; MLflow 3
        # refuses one unless told it is wanted
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    shown = uri or mlflow.get_tracking_uri()
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or experiment
    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(name)
        exp_id = found.experiment_id if found is not None else client.create_experiment(name)
    except Exception as exc:  # MlflowException, a driver the store needs (sqlalchemy), OSError
        msg = f"--mlflow {redact_text(shown)}: cannot open the tracking store ({_one_line(exc)})"
        raise ScenarioError(msg) from None
    return Tracker(client, redact_text(shown), str(exp_id))


def overall_verdict(summary: Summary) -> str:
    """``missed`` if a step missed, else ``inconclusive`` if one was, else ``met``; ``none``
    when no step was judged (no SLA bounds, or every step cut short: ``standing``)."""
    verdicts = {s.standing for s in summary.steps}
    for word in ("missed", "inconclusive", "met"):
        if word in verdicts:
            return word
    return "none"


@dataclass(frozen=True, slots=True)
class Tracker:
    """An open tracking store and the experiment a results directory is logged into."""

    client: Any  # mlflow.tracking.MlflowClient
    uri: str
    experiment_id: str

    def log(self, results_dir: Path) -> list[str]:
        """Log ``results_dir`` (a run, or a --repeat folder: a parent and its children);
        the MLflow run ids, the first the top one."""
        try:
            if not (results_dir / "summary.json").is_file() and repeat_folders(results_dir):
                return self._log_repeats(results_dir)
            return [self._log_run(results_dir, load_summary(results_dir), None)]
        except (ScenarioError, OutputError):
            raise
        except Exception as exc:  # MlflowException, OSError, a store that went away
            msg = f"--mlflow {self.uri}: cannot log {results_dir} ({_one_line(exc)})"
            raise OutputError(msg) from None

    def _log_repeats(self, folder: Path) -> list[str]:
        repeats = repeat_folders(folder)
        first = load_summary(repeats[0])
        tags = {"loadgen.repeats": str(len(repeats)), "loadgen.results_dir": str(folder.resolve())}
        parent = self.client.create_run(
            self.experiment_id, run_name=folder.name, tags=tags, start_time=_start_ms(first)
        ).info.run_id
        self._params(parent, repeats[0])
        self._artifacts(parent, folder)
        ids = [parent]
        ids += [self._log_run(r, load_summary(r), parent) for r in repeats]
        self.client.set_terminated(parent, "FINISHED")
        return ids

    def _log_run(self, results_dir: Path, summary: Summary, parent: str | None) -> str:
        tags = _tags(summary, results_dir)
        if parent is not None:
            tags["mlflow.parentRunId"] = parent
        run_id: str = self.client.create_run(
            self.experiment_id,
            run_name=results_dir.name,
            tags=tags,
            start_time=_start_ms(summary),
        ).info.run_id
        try:
            self._params(run_id, results_dir)
            self._metrics(run_id, summary)
            self._artifacts(run_id, results_dir)
        except BaseException:
            self.client.set_terminated(run_id, "FAILED")
            raise
        status = "KILLED" if summary.interrupted else "FINISHED"
        self.client.set_terminated(run_id, status, end_time=_end_ms(summary))
        return run_id

    def _params(self, run_id: str, results_dir: Path) -> None:
        from mlflow.entities import Param

        path = results_dir / "scenario.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        params = [Param(k, v) for k, v in flatten(data if isinstance(data, dict) else {}).items()]
        for i in range(0, len(params), _BATCH):
            self.client.log_batch(run_id, params=params[i : i + _BATCH])

    def _metrics(self, run_id: str, summary: Summary) -> None:
        from mlflow.entities import Metric

        _, rows = steps_table(summary)
        metrics = []
        for step, row in zip(summary.steps, rows, strict=True):
            at = _wall_ms(summary, step.ended_ns or step.started_ns)
            metrics += [Metric(k, v, at, step.index) for k, v in _numbers(row).items()]
        v = summary.verdict
        if v is not None:
            answer = {
                "verdict_max_passing": v.max_passing,
                "verdict_goodput_requests_per_s": v.goodput_requests_per_s,
                "verdict_output_tokens_per_s": v.output_tokens_per_s,
            }
            end = _end_ms(summary)
            metrics += [Metric(k, x, end, 0) for k, x in _numbers(answer).items()]
        for i in range(0, len(metrics), 10 * _BATCH):
            self.client.log_batch(run_id, metrics=metrics[i : i + 10 * _BATCH])

    def _artifacts(self, run_id: str, results_dir: Path) -> None:
        for name in ARTIFACTS:
            if (results_dir / name).is_file():
                self.client.log_artifact(run_id, str(results_dir / name))
        for name in _FOLDERS:
            if (results_dir / name).is_dir():
                self.client.log_artifacts(run_id, str(results_dir / name), name)


def _numbers(row: dict[str, Any]) -> dict[str, float]:
    """The finite numbers of a row (a boolean as 0/1), named as its columns."""
    out = {}
    for key, value in row.items():
        if isinstance(value, bool | int | float) and math.isfinite(value):
            out[key] = float(value)
    return out


def _tags(summary: Summary, results_dir: Path) -> dict[str, str]:
    v = summary.verdict
    best = v.max_passing if v is not None else None
    tags = {
        "loadgen.verdict": overall_verdict(summary),
        "loadgen.verdict_text": v.text if v is not None and v.text else "none",
        "loadgen.max_passing": "none" if best is None else f"{best:g}",
        "loadgen.run_id": summary.run_id,
        "loadgen.version": summary.loadgen_version,
        "loadgen.api": summary.api,
        "loadgen.model": summary.model,
        "loadgen.target_url": redact_text(strip_userinfo(summary.target_url)),
        "loadgen.metrics_profile": summary.metrics_profile,
        "loadgen.interrupted": str(summary.interrupted).lower(),
        "loadgen.results_dir": str(results_dir.resolve()),
    }
    _, rows = steps_table(summary)
    for step, row in zip(summary.steps, rows, strict=True):
        tags[f"loadgen.step.{step.index}.verdict"] = step.standing or "none"
        value = row.get("load_value")
        tags[f"loadgen.step.{step.index}.load"] = (
            f"{step.load.mode} {value:g}" if value is not None else "-"
        )
    return tags


def _wall_ms(summary: Summary, t_ns: int) -> int:
    """A monotonic stamp of the run as Unix milliseconds (the summary's clock anchor)."""
    a = summary.clock_anchor
    return (a.wall_ns + (t_ns - a.monotonic_ns)) // 1_000_000 if t_ns else a.wall_ns // 1_000_000


def _start_ms(summary: Summary) -> int:
    return _wall_ms(summary, summary.steps[0].started_ns if summary.steps else 0)


def _end_ms(summary: Summary) -> int:
    ends = [s.ended_ns for s in summary.steps if s.ended_ns]
    return _wall_ms(summary, max(ends) if ends else 0)
