"""loadgen: an exact load generator and benchmark for live LLM inference servers.

The public door. Names are imported on first use (PEP 562), so ``import
loadgen`` and ``loadgen --help`` stay fast::

    from loadgen import RunOptions, load_scenario, run_scenario

    summary = run_scenario(load_scenario(Path("scenarios/demo.yaml")), RunOptions(Path("out")))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loadgen._version import __version__

_EXPORTS = {
    "LoadgenError": "loadgen.errors",
    "Record": "loadgen.records",
    "RunOptions": "loadgen.run",
    "Scenario": "loadgen.scenario",
    "ScenarioError": "loadgen.errors",
    "StepSummary": "loadgen.summary",
    "Summary": "loadgen.summary",
    "TargetError": "loadgen.errors",
    "load_scenario": "loadgen.scenario",
    "read_records": "loadgen.records",
    "read_summary": "loadgen.results.files",
    "run_scenario": "loadgen.run",
    "write_reports": "loadgen.report.documents.writer",
}

__all__ = [
    "LoadgenError",
    "Record",
    "RunOptions",
    "Scenario",
    "ScenarioError",
    "StepSummary",
    "Summary",
    "TargetError",
    "__version__",
    "load_scenario",
    "read_records",
    "read_summary",
    "run_scenario",
    "write_reports",
]

if TYPE_CHECKING:
    from loadgen.errors import LoadgenError, ScenarioError, TargetError
    from loadgen.records import Record, read_records
    from loadgen.report import write_reports
    from loadgen.results import read_summary
    from loadgen.run import RunOptions, run_scenario
    from loadgen.scenario import Scenario, load_scenario
    from loadgen.summary import StepSummary, Summary


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loadgen' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
