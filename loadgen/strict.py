"""The pydantic base models of loadgen's edges, declared once.

- :class:`Strict`: unknown keys are refused (``extra="forbid"``). What loadgen
  writes and reads back (``summary.json``) derives from it.
- :class:`Sparse`: a :class:`Strict` that writes only the fields that were given
  (set, even to None): a description whose keys depend on the run keeps its
  shape in ``summary.json``, key for key.
- :class:`Spec`: a :class:`Strict` that is also frozen and refuses inf and NaN:
  what a user writes (the scenario file) derives from it.

A leaf: every layer may import it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["Sparse", "Spec", "Strict"]


class Strict(BaseModel):
    """A model that refuses keys it does not declare."""

    model_config = ConfigDict(extra="forbid")


class Spec(Strict):
    """A :class:`Strict` model that is frozen and takes finite numbers only."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)


class Sparse(Strict):
    """A :class:`Strict` model that dumps only its fields in ``model_fields_set``."""

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}
