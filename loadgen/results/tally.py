"""One step's tally: every record added once to the columns its summary is made from.

:class:`StepTally` owns the fan-out of a record: the step's own columns, its
endpoint's (with two or more endpoints, for their breakdown) and its model's
(with a model mix). The live run adds each record as it finishes and drops it;
the rebuild of a killed run adds the records it reads back: one fan-out, so the
two summaries cannot differ in what each part counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from loadgen.metrics import StepColumns
from loadgen.records import Record

__all__ = ["StepTally"]


@dataclass(slots=True)
class StepTally:
    """The step's columns, each endpoint's (none with one endpoint), each model's (none
    without a mix). A record of an endpoint or model outside the lists is in the step's
    columns only."""

    whole: StepColumns = field(default_factory=StepColumns)
    endpoints: list[StepColumns] = field(default_factory=list)
    models: dict[str, StepColumns] = field(default_factory=dict)

    @classmethod
    def of(cls, endpoints: int, models: Sequence[str] = ()) -> StepTally:
        """An empty tally for ``endpoints`` endpoints and the mix's ``models`` (names)."""
        parts = [StepColumns() for _ in range(endpoints)] if endpoints > 1 else []
        return cls(StepColumns(), parts, {name: StepColumns() for name in models})

    def add(self, rec: Record) -> None:
        self.whole.add(rec)
        parts = self.endpoints
        if parts and rec.endpoint is not None and 0 <= rec.endpoint < len(parts):
            parts[rec.endpoint].add(rec)
        models = self.models
        if models and rec.model in models:
            models[rec.model].add(rec)
