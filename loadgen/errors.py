"""Exceptions loadgen raises to its callers, each with the exit code the CLI gives it.

Callers catch :class:`LoadgenError`. A failed *request* is never an
exception: it becomes a record with an ``error_kind`` and the run goes on.
What the whole run amounts to (no request succeeded, an SLA missed, a step
inconclusive) is raised by the CLI after the results are written.

    LoadgenError                 exit 1
    ├── ScenarioError            exit 2  bad input: scenario file, CLI flag, a file it names
    │   └── OutputError          exit 2  the results directory cannot be written
    ├── TargetError              exit 1  the target could not be set up (mock did not start)
    │   └── TargetUnusable       exit 3  the run completed and no request succeeded
    ├── SlaMissed                exit 1  --fail-on-sla: a step missed a bound (named)
    ├── Inconclusive             exit 1  --strict: a step's numbers cannot be trusted
    ├── Regression               exit 1  compare --fail-if: the last run is worse
    └── Interrupted              exit 130  Ctrl-C: the partial results are written
        ├── Terminated           exit 143  SIGTERM, handled like Ctrl-C
        └── HungUp               exit 129  SIGHUP (a closed terminal), handled like Ctrl-C

``exit_code`` is a class attribute; ``loadgen.cli.EXIT_CODES`` lists the
same table in the one place the CLI maps errors to codes.
"""

from __future__ import annotations

__all__ = [
    "HungUp",
    "Inconclusive",
    "Interrupted",
    "LoadgenError",
    "OutputError",
    "Regression",
    "ScenarioError",
    "SlaMissed",
    "TargetError",
    "TargetUnusable",
    "Terminated",
]


class LoadgenError(Exception):
    """Base class of every error loadgen raises on purpose."""

    exit_code = 1


class ScenarioError(LoadgenError):
    """Bad input. The message is one line naming the source, the field and what was expected."""

    exit_code = 2


class OutputError(ScenarioError):
    """The results directory (``--out``) is not a writable directory."""


class TargetError(LoadgenError):
    """The target could not be prepared (for example the built-in mock did not start)."""


class TargetUnusable(TargetError):
    """The run completed but not one request succeeded: the message says why, with a hint."""

    exit_code = 3


class SlaMissed(LoadgenError):
    """``--fail-on-sla``: a step missed its SLA; the message names the bound."""


class Inconclusive(LoadgenError):
    """``--strict``: a step is inconclusive (loadgen itself may have been the bottleneck)."""


class Regression(LoadgenError):
    """``loadgen compare --fail-if``: the last run is worse than the baseline."""


class Interrupted(LoadgenError):
    """The run was interrupted (Ctrl-C); its partial results are written."""

    exit_code = 130


class Terminated(Interrupted):
    """The run was stopped by SIGTERM, handled like Ctrl-C; its partial results are written."""

    exit_code = 143


class HungUp(Interrupted):
    """The run was stopped by SIGHUP (its terminal closed, an SSH session dropped),
    handled like Ctrl-C; its partial results are written."""

    exit_code = 129
