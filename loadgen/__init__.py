"""loadgen: an exact load generator and benchmark for live LLM inference servers.

The public door. Names are imported on first use (PEP 562), so ``import
loadgen`` and ``loadgen --help`` stay fast::

    from loadgen import RunOptions, load_scenario, run_scenario

    summary = run_scenario(load_scenario(Path("scenarios/demo.yaml")), RunOptions(Path("out")))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen._version import __version__
from loadgen.lazy import lazy_exports

_EXPORTS = {
    "LoadgenError": "errors",
    "Record": "records",
    "RunOptions": "run",
    "Scenario": "scenario",
    "ScenarioError": "errors",
    "StepSummary": "summary",
    "Summary": "summary",
    "TargetError": "errors",
    "load_scenario": "scenario",
    "read_records": "records",
    "read_summary": "results",
    "run_scenario": "run",
    "write_reports": "report",
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


if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
