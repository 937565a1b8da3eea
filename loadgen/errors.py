"""Exceptions loadgen raises to its callers.

Callers catch :class:`LoadgenError`. A failed *request* is never an
exception: it becomes a record with an ``error_kind`` and the run goes on.

    LoadgenError
    ├── ScenarioError      bad input: scenario file, CLI override, results dir (exit 2)
    └── TargetError        the target could not be set up (mock failed to start, ...)

Imports: nothing from loadgen.
"""

from __future__ import annotations

__all__ = ["LoadgenError", "ScenarioError", "TargetError"]


class LoadgenError(Exception):
    """Base class of every error loadgen raises on purpose."""


class ScenarioError(LoadgenError):
    """Bad input. The message is one line naming the source, the field and what was expected."""


class TargetError(LoadgenError):
    """The target could not be prepared (for example the built-in mock did not start)."""
