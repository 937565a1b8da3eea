"""An optional dependency, imported on demand: a missing extra is one line and exit 2."""

from __future__ import annotations

import importlib
from types import ModuleType

from loadgen.errors import ScenarioError

__all__ = ["need"]


def need(module: str, extra: str, what: str) -> ModuleType:
    """``module``, imported; absent, a ScenarioError naming the pip line that brings it.

    >>> need("pyarrow", "parquet", "--parquet")  # doctest: +SKIP
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        msg = f"{what} needs the {extra} extra ({module}): pip install 'loadgen[{extra}]'"
        raise ScenarioError(msg) from None
