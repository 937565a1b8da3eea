"""Files of a results directory: the resolved scenario and summary.json.

Imports: orjson, yaml, loadgen.summary, loadgen.scenario.models.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from loadgen.scenario.models import Scenario
from loadgen.summary import Summary

__all__ = ["SECRET_HEADERS", "read_summary", "write_resolved_scenario", "write_summary"]

#: Header names whose values never reach a results directory.
SECRET_HEADERS = ("authorization", "api-key", "x-api-key", "cookie", "proxy-authorization")


def write_resolved_scenario(scenario: Scenario, path: Path) -> None:
    """The scenario as run, every default filled in, secrets removed."""
    data = scenario.model_dump(mode="json")
    headers = data["target"]["headers"]
    for name in headers:
        if name.lower() in SECRET_HEADERS or "token" in name.lower():
            headers[name] = "<redacted>"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def write_summary(summary: Summary, path: Path) -> None:
    """Atomically replace ``path``: a reader never sees half a summary."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)


def read_summary(path: Path) -> Summary:
    return Summary.model_validate_json(path.read_bytes())
