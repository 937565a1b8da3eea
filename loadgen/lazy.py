"""Lazy doors: a package hands out names whose modules are imported on first use (PEP 562).

A door whose modules are heavy (matplotlib, numpy, aiohttp) or many, and
which the start-up of ``loadgen --help`` or of a worker should not pay for,
keeps a table ``{name: submodule}`` instead of importing them; ``from pkg
import name`` then imports only the submodule that defines ``name``. The door
imports the same names under ``if TYPE_CHECKING:`` so that mypy sees each one
with its type (tests/unit/test_layering.py keeps the table and those imports
equal), and sets ``__getattr__`` only outside type checking, so that mypy
refuses a name the door does not hand out.

Nothing is cached in the door: each look-up reads the submodule's attribute,
as the deep import it replaces did.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``name`` read from ``package.<table[name]>``."""

    def __getattr__(name: str) -> Any:
        submodule = table.get(name)
        if submodule is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        return getattr(importlib.import_module(f"{package}.{submodule}"), name)

    return __getattr__
