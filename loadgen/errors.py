"""Exceptions loadgen raises to its callers, each with the exit code the CLI gives it.

Callers catch :class:`LoadgenError`. A failed *request* is never an
exception: it becomes a record with an ``error_kind`` and the run goes on.
What the whole run amounts to (no request succeeded, an SLA missed, a step
inconclusive) is raised by the CLI after the results are written.

    LoadgenError                 exit 1
    ├── ScenarioError            exit 2
    │   └── OutputError          exit 2
    ├── TargetError              exit 1
    │   └── TargetUnusable       exit 3
    ├── SlaMissed                exit 1
    ├── Inconclusive             exit 1
    ├── Regression               exit 1
    └── Interrupted              exit 130
        ├── Terminated           exit 143
        └── HungUp               exit 129

Each class carries its ``exit_code`` and what that code means when it is
raised: ``brief`` for ``loadgen --help``, ``meaning`` for README.md's table.
:data:`EXIT_CODES` gathers them by code, and both texts are rendered from it
(:func:`exit_codes_brief`, :func:`exit_codes_markdown`), so there is one table.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "EXIT_CODES",
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
    "exit_codes_brief",
    "exit_codes_markdown",
]


class LoadgenError(Exception):
    """Base class of every error loadgen raises on purpose."""

    exit_code: ClassVar[int] = 1
    #: what the code means when this class is raised: short (--help), whole (README.md)
    brief: ClassVar[str] = ""
    meaning: ClassVar[str] = ""


class ScenarioError(LoadgenError):
    """Bad input. The message is one line naming the source, the field and what was expected."""

    exit_code = 2
    brief = "bad input"
    meaning = (
        "bad input: scenario file, flag or results directory (one line on stderr naming the"
        " file or flag, the field and what was expected)"
    )


class OutputError(ScenarioError):
    """The results directory (``--out``) is not a writable directory."""

    brief = "a refused write"
    meaning = (
        "also a disk that refuses a write during the run (full, read-only, over quota), the"
        " records, summary, reports and plots alike: the line names the file, the run stops"
        " and what was written before it stays"
    )


class TargetError(LoadgenError):
    """The target could not be prepared (for example the built-in mock did not start)."""

    brief = "target not set up"
    meaning = (
        "the target could not be set up (the built-in mock did not start, `model: auto`"
        " found no single model)"
    )


class TargetUnusable(TargetError):
    """The run completed but not one request succeeded: the message says why, with a hint."""

    exit_code = 3
    brief = "target unusable (no request succeeded)"
    meaning = (
        "target unusable: the run completed and not one request succeeded, or it stopped at"
        " its start because every request failed to connect (`load.stop_on_errors`; the"
        " errors and hints are above it)"
    )


class SlaMissed(LoadgenError):
    """``--fail-on-sla``: a step missed its SLA; the message names the bound."""

    brief = "SLA missed (--fail-on-sla)"
    meaning = "`--fail-on-sla`: a step missed its SLA with confidence (the bound is named)"


class Inconclusive(LoadgenError):
    """``--strict``: a step is inconclusive (its sample or loadgen's own error cannot decide it)."""

    brief = "inconclusive (--strict)"
    meaning = (
        "`--strict`: a step is inconclusive (too few requests for a percentile bound at"
        " `sla.confidence`, a bound within loadgen's own error of the value, or a bound inside"
        " its interval; each step's reason is named)"
    )


class Regression(LoadgenError):
    """``loadgen compare --fail-if``: the last run is worse than the baseline."""

    brief = "a regression (compare --fail-if)"
    meaning = "`compare --fail-if`: a regression"


class Interrupted(LoadgenError):
    """The run was interrupted (Ctrl-C); its partial results are written."""

    exit_code = 130
    brief = "interrupted (Ctrl-C)"
    meaning = "interrupted (partial results are kept)"


class Terminated(Interrupted):
    """The run was stopped by SIGTERM, handled like Ctrl-C; its partial results are written."""

    exit_code = 143
    brief = "stopped by SIGTERM"
    meaning = "stopped by SIGTERM, handled like Ctrl-C (partial results are kept)"


class HungUp(Interrupted):
    """The run was stopped by SIGHUP (its terminal closed, an SSH session dropped),
    handled like Ctrl-C; its partial results are written."""

    exit_code = 129
    brief = "stopped by SIGHUP"
    meaning = (
        "stopped by SIGHUP (a closed terminal, a dropped SSH session), handled like Ctrl-C"
        " (partial results are kept)"
    )


#: the classes whose codes the CLI gives, in the order their meanings are told
_TOLD: tuple[type[LoadgenError], ...] = (
    SlaMissed,
    Inconclusive,
    Regression,
    TargetError,
    ScenarioError,
    OutputError,
    TargetUnusable,
    HungUp,
    Interrupted,
    Terminated,
)

#: every exit code of ``loadgen`` -> (brief, meaning): 0, then each class's code, its
#: classes' texts joined (" or " briefly, "; " in whole)
EXIT_CODES: dict[int, tuple[str, str]] = {
    0: ("completed", "the run completed, whatever the server did (failures are data)"),
    **{
        code: (
            " or ".join(c.brief for c in _TOLD if c.exit_code == code),
            "; ".join(c.meaning for c in _TOLD if c.exit_code == code),
        )
        for code in sorted({c.exit_code for c in _TOLD})
    },
}


def exit_codes_brief() -> str:
    """The codes on one line for ``--help``: ``0 completed, 1 SLA missed ..., 2 bad input``."""
    return ", ".join(f"{code} {brief}" for code, (brief, _) in EXIT_CODES.items())


def exit_codes_markdown() -> str:
    """README.md's table of exit codes: a ``| code | meaning |`` row each."""
    rows = [f"| {code} | {meaning} |" for code, (_, meaning) in EXIT_CODES.items()]
    return "\n".join(["| code | meaning |", "|---|---|", *rows])
