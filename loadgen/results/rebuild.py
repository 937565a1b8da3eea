"""A summary rebuilt from what a killed run left: ``records.jsonl`` and the resolved scenario.

``loadgen run`` rewrites summary.json after every step, so only a run killed
(kill -9, a crash, a power cut) before its first step ended has none. From
the records and the resolved ``scenario.yaml`` each step is summarised again
with :func:`loadgen.results.assemble.step_summary`, the sweep replayed over the
rebuilt steps to name each one's load (auto and sla-search sweeps included),
and the last step and the run are marked interrupted. What only the live run
saw is absent: client health and in-flight sampling, telemetry, the
prefix-cache counters, the pre-flight check, the workload description; the
metrics profile is loadgen's own. The clock anchor pairs the last request's
end with the records file's modification time (flushed within 100 ms of it).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from loadgen.errors import ScenarioError
from loadgen.records import Record, read_records
from loadgen.results.assemble import start_summary, step_summary
from loadgen.results.sweep import make_sweep, verdict
from loadgen.results.tally import StepTally
from loadgen.scenario import (
    DROP,
    ConcurrencyLoad,
    OfflineLoad,
    Overrides,
    RateLoad,
    TargetSpec,
    TraceLoad,
    load_scenario,
)
from loadgen.summary import ClockAnchor, Summary

__all__ = ["can_rebuild", "rebuild_summary"]

#: the metrics profile of a rebuilt summary (the run's --metrics-profile is not saved elsewhere)
PROFILE = "loadgen"


def can_rebuild(results_dir: Path) -> bool:
    """The directory has no summary.json but the files to rebuild one from."""
    return (
        not (results_dir / "summary.json").exists()
        and (results_dir / "records.jsonl").is_file()
        and (results_dir / "scenario.yaml").is_file()
    )


def rebuild_summary(results_dir: Path) -> Summary:
    """The summary of ``results_dir`` made again from its records and resolved scenario."""
    path = results_dir / "scenario.yaml"
    try:
        scenario = load_scenario(path, _defaults_dropped(path), check_inputs=False)
    except ScenarioError as exc:
        msg = f"cannot rebuild summary.json: {exc}"
        raise ScenarioError(msg) from None
    records_path = results_dir / "records.jsonl"
    # Each record is read, added to its step's tally and dropped: memory stays small.
    urls = _endpoint_names(scenario.target)
    names = [name for name, _ in scenario.target.mix]
    by_step: dict[int, StepTally] = defaultdict(lambda: StepTally.of(len(urls), names))
    firsts: dict[int, Record] = {}  # per step, the first record to start
    last_end = 0
    for r in read_records(records_path):
        by_step[r.step].add(r)
        if r.step not in firsts or r.start_ns < firsts[r.step].start_ns:
            firsts[r.step] = r
        last_end = max(last_end, r.end_ns)
    first = min(firsts.values(), key=lambda r: r.start_ns, default=None)
    summary = start_summary(
        scenario,
        run_id=first.request_id.split("-")[0] if first is not None else "rebuilt",
        endpoints=urls,
        anchor=ClockAnchor(monotonic_ns=last_end, wall_ns=records_path.stat().st_mtime_ns),
        metrics_profile=PROFILE,
        interrupted=True,
    )
    sweep = make_sweep(scenario.load)
    last = max(by_step, default=-1)
    for index in range(last + 1):
        point = sweep.next_point()
        if point is None:  # records of steps the sweep would not have run: not this scenario's
            break
        step = step_summary(
            scenario,
            index,
            point,
            by_step[index],
            metrics_profile=PROFILE,
            endpoints=urls,
            interrupted=index == last,
        )
        sweep.observe(point, step)
        summary.steps.append(step)
    summary.verdict = verdict(sweep)
    return summary


def _endpoint_names(target: TargetSpec) -> list[str]:
    """The endpoints' URLs; the mock replicas' ports are gone, so they are named by index."""
    if target.is_mock and target.mock.replicas > 1:
        return [f"mock replica {i}" for i in range(target.mock.replicas)]
    return target.endpoints


def _defaults_dropped(path: Path) -> Overrides:
    """Overrides that drop the load fields holding their default.

    The resolved scenario lists every default, and a field of another sweep
    kind that is *set* is refused when the file is read back.
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}  # load_scenario says what is wrong
    load = raw.get("load") if isinstance(raw, dict) else None
    if not isinstance(load, dict):
        return {}
    modes: dict[str, type[BaseModel]] = {
        "concurrency": ConcurrencyLoad,
        "rate": RateLoad,
        "trace": TraceLoad,
        "offline": OfflineLoad,
    }
    cls = modes.get(str(load.get("mode")))
    if cls is None:
        return {}
    known = cls.model_fields
    drop: dict[tuple[str, ...], Any] = {
        ("load", k): DROP
        for k, v in load.items()
        if k != "mode"
        and k in known
        and not known[k].is_required()
        and v == known[k].get_default(call_default_factory=True)
    }
    return {f"{path}": drop}
