"""Files of a results directory: the resolved scenario and summary.json.

Read back by :func:`load_summary`: a folder that is not a results directory, or
a summary.json that does not validate, is a one-line ScenarioError.

Both are written atomically (a temporary file, then ``os.replace``): a reader
never sees half a file. The resolved scenario holds no secret: URL userinfo,
header values (but harmless ones) and credential-like ``extra_body`` keys are
redacted (:mod:`loadgen.redact`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pydantic
import yaml

from loadgen.errors import ScenarioError
from loadgen.redact import redact_body, redact_headers, strip_userinfo
from loadgen.scenario import Scenario
from loadgen.summary import Summary

__all__ = [
    "load_summary",
    "read_summary",
    "resolved_scenario",
    "write_atomic",
    "write_resolved_scenario",
    "write_summary",
]


def resolved_scenario(scenario: Scenario) -> dict[str, Any]:
    """The scenario as run, every default filled in, secrets removed."""
    data = scenario.model_dump(mode="json")
    target = data["target"]
    target["url"] = strip_userinfo(target["url"])
    if target["urls"] is None:
        del target["urls"]  # one server: the file reads as it did before urls existed
    else:
        del target["url"]  # urls and url exclude each other (the file is read back)
        target["urls"] = [strip_userinfo(u) for u in target["urls"]]
    if target.get("models") is None:
        target.pop("models", None)  # one model: the file reads as it did before mixes
    else:
        del target["model"]  # model and models exclude each other (the file is read back)
    target["headers"] = redact_headers(target["headers"])
    target["extra_body"] = redact_body(target["extra_body"])
    tel = data["telemetry"]
    tel["agents"] = [strip_userinfo(u) for u in tel["agents"]]
    if tel["server_metrics"] is not None:
        tel["server_metrics"] = strip_userinfo(tel["server_metrics"])
    tel["dcgm"] = [strip_userinfo(u) for u in tel.get("dcgm", [])]
    if tel.get("prometheus") is not None:
        tel["prometheus"]["url"] = strip_userinfo(tel["prometheus"]["url"])
    return data


def write_resolved_scenario(scenario: Scenario, path: Path) -> None:
    """Write :func:`resolved_scenario` to ``path`` as YAML, atomically."""
    write_atomic(path, yaml.safe_dump(resolved_scenario(scenario), sort_keys=False))


def write_summary(summary: Summary, path: Path) -> None:
    """Atomically replace ``path``: a reader never sees half a summary."""
    write_atomic(path, summary.model_dump_json(indent=2))


def write_atomic(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` through a temporary file; a refused write names ``path``."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_summary(path: Path) -> Summary:
    return Summary.model_validate_json(path.read_bytes())


def load_summary(results_dir: Path) -> Summary:
    """The summary of a results directory; bad input is a one-line ScenarioError."""
    where = f"results dir {str(results_dir)!r}"
    if not results_dir.is_dir():
        msg = f"{where}: not a directory; expected the folder `loadgen run` wrote"
        raise ScenarioError(msg)
    path = results_dir / "summary.json"
    if not path.is_file():
        msg = f"{where}: no summary.json; expected the folder `loadgen run` wrote"
        raise ScenarioError(msg)
    try:
        return read_summary(path)
    except (pydantic.ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        msg = f"{path}: not a loadgen summary ({first})"
        raise ScenarioError(msg) from None
