"""The pydantic base models of loadgen's edges, declared once.

- :class:`Strict`: unknown keys are refused (``extra="forbid"``). What loadgen
  writes and reads back (``summary.json``) derives from it.
- :class:`Spec`: a :class:`Strict` that is also frozen and refuses inf and NaN:
  what a user writes (the scenario file) derives from it.

A leaf: every layer may import it.

Imports: pydantic.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Spec", "Strict"]


class Strict(BaseModel):
    """A model that refuses keys it does not declare."""

    model_config = ConfigDict(extra="forbid")


class Spec(Strict):
    """A :class:`Strict` model that is frozen and takes finite numbers only."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)
