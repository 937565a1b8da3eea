"""Command-line flags -> the scenario fields they set (:data:`~loadgen.scenario.load.Overrides`).

The overrides are validated with the scenario, so a bad value is blamed on
the flag that set it. A flag that switches the load mode (``--concurrency``,
``--rate``) drops every load field the new mode's model does not have: the
list is derived from the models, so a field added to one mode needs no
change here.

Imports: loadgen.errors, loadgen.scenario (load, loadspec).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from loadgen.errors import ScenarioError
from loadgen.scenario.load import DROP, Overrides, split_list
from loadgen.scenario.loadspec import ConcurrencyLoad, OfflineLoad, RateLoad, TraceLoad

__all__ = ["flag_overrides"]

#: every load mode's model; the fields of the others are dropped when a flag picks one
_MODES: tuple[type[BaseModel], ...] = (ConcurrencyLoad, RateLoad, TraceLoad, OfflineLoad)

#: flag -> (scenario section, field) for flags that set one field each, as given
_PLAIN = {
    "url": ("target", "url"),
    "model": ("target", "model"),
    "api": ("target", "api"),
    "workers": ("load", "workers"),
    "usd_per_hour": ("cost", "usd_per_hour"),
    "serve_metrics": ("telemetry", "serve_metrics"),
    "serve_metrics_token_env": ("telemetry", "serve_metrics_token_env"),
    "serve_metrics_linger": ("telemetry", "serve_metrics_linger_s"),
}


def _other_fields(mode: type[BaseModel]) -> dict[tuple[str, ...], Any]:
    """A drop of every load field that ``mode`` has no place for."""
    others = {name for m in _MODES for name in m.model_fields} - set(mode.model_fields)
    return {("load", name): DROP for name in sorted(others)}


def flag_overrides(flags: Mapping[str, Any]) -> Overrides:
    """The fields each given flag sets (keyed ``--flag``; None means the flag was not given)."""
    if flags.get("concurrency") and flags.get("rate"):
        raise ScenarioError("command line: give only one of --concurrency and --rate")
    out: dict[str, dict[tuple[str, ...], Any]] = {}
    for flag, path in _PLAIN.items():
        if flags.get(flag) is not None:  # an empty --url is an error, not "no flag"
            out[f"--{flag.replace('_', '-')}"] = {path: flags[flag]}
    if "--url" in out:  # one URL replaces the scenario's list of replicas
        out["--url"][("target", "urls")] = DROP
    if c := flags.get("concurrency"):
        out["--concurrency"] = {
            **_other_fields(ConcurrencyLoad),
            ("load", "concurrency"): split_list("--concurrency", c, int),
            ("load", "mode"): "concurrency",
        }
    if r := flags.get("rate"):
        out["--rate"] = {
            **_other_fields(RateLoad),
            ("load", "rate"): split_list("--rate", r, float),
            ("load", "mode"): "rate",
        }
    if (n := flags.get("requests")) is not None:
        out["--requests"] = {("load", "requests_per_step"): n, ("load", "duration_s"): None}
    if (d := flags.get("duration")) is not None:
        out["--duration"] = {("load", "duration_s"): d, ("load", "requests_per_step"): None}
    return out
