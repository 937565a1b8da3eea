"""Command-line flags -> the scenario fields they set (:data:`~loadgen.scenario.load.Overrides`).

The overrides are validated with the scenario, so a bad value is blamed on
the flag that set it. A flag that switches the load mode (``--concurrency``,
``--rate``) drops every load field the new mode's model does not have: the
list is derived from the models, so a field added to one mode needs no
change here. ``--prompt-tokens N`` and ``--output-tokens N`` fix a length
(``{dist: fixed, value: N}``) in place of the scenario's distribution; where
the scenario takes that length from elsewhere (a dataset's prompts, a trace)
the flag would do nothing, and :func:`check_lengths_apply` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from loadgen.errors import ScenarioError
from loadgen.scenario.load import DROP, Overrides, split_list
from loadgen.scenario.loadspec import ConcurrencyLoad, OfflineLoad, RateLoad, TraceLoad
from loadgen.scenario.models import Scenario

__all__ = ["check_lengths_apply", "flag_overrides"]

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


#: flag -> the workload length it fixes (every request that many tokens)
_LENGTHS = {"prompt_tokens": "prompt_tokens", "output_tokens": "output_tokens"}


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
    for flag, name in _LENGTHS.items():
        if (n := flags.get(flag)) is not None:  # a fixed length replaces the distribution
            out[f"--{flag.replace('_', '-')}"] = {("workload", name): {"dist": "fixed", "value": n}}
    return out


def check_lengths_apply(sc: Scenario, flags: Mapping[str, Any]) -> None:
    """Refuse ``--prompt-tokens`` / ``--output-tokens`` where ``sc`` takes the length elsewhere.

    A dataset brings its prompts (its answers' lengths fall back to
    ``output_tokens``: that flag applies); a trace brings both lengths.
    """
    trace = isinstance(sc.load, TraceLoad)
    for flag, why in (
        ("prompt_tokens", "workload.dataset brings the prompts" if sc.workload.dataset else None),
        (
            "prompt_tokens",
            "load.mode trace takes the prompt lengths from the trace" if trace else None,
        ),
        (
            "output_tokens",
            "load.mode trace takes the output lengths from the trace" if trace else None,
        ),
    ):
        if why and flags.get(flag) is not None:
            name = f"--{flag.replace('_', '-')}"
            raise ScenarioError(f"command line {name}: {why}; the flag would do nothing: drop it")
