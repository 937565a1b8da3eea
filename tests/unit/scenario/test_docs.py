"""docs/scenario.md documents every scenario field, and every field has a description."""

from __future__ import annotations

import types
import typing
from pathlib import Path

from pydantic import BaseModel

from loadgen.scenario.dists import DatasetSpec, EmpiricalDist, FixedDist, Histogram, UniformDist
from loadgen.scenario.loadspec import ConcurrencyLoad, RateLoad, TraceLoad
from loadgen.scenario.models import Scenario
from loadgen.scenario.sla_spec import PercentileBounds
from loadgen.scenario.workload_spec import PrefixSpec, SessionSpec

DOC = (Path(__file__).parents[3] / "docs" / "scenario.md").read_text()


def models_in(ann: object) -> list[type[BaseModel]]:
    """The pydantic models an annotation names, through unions, Optional and Annotated."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    if typing.get_origin(ann) in (typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(ann)
        if typing.get_origin(ann) is typing.Annotated:
            args = args[:1]
        return [m for a in args for m in models_in(a)]
    return []


#: Distribution forms are documented once, in the table of forms, not per field.
_FORMS = {"dist", "value", "min", "max", "mean", "std", "mu", "sigma", "values", "histogram"}


def field_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        path = prefix + name
        out.append(path)
        for sub in models_in(info.annotation):
            if sub is PercentileBounds or "dist" in sub.model_fields:
                continue
            out.extend(field_paths(sub, path + "."))
    return out


def test_the_walk_sees_every_load_mode() -> None:
    paths = field_paths(Scenario)
    for p in (
        "load.concurrency",
        "load.rate",
        "load.trace",
        "load.ramp_up_s",
        "workload.prefix.groups",
    ):
        assert p in paths


def test_every_distribution_field_is_in_the_forms_table() -> None:
    forms = DOC.split("A distribution is one of")[1].split("## ")[0]
    for model in (EmpiricalDist, Histogram):
        for name in model.model_fields:
            assert f"{name}" in forms, f"{model.__name__}.{name}"


def test_every_field_is_documented() -> None:
    missing = [p for p in field_paths(Scenario) if f"`{p}`" not in DOC]
    assert not missing


def test_every_field_has_a_description() -> None:
    models: list[type[BaseModel]] = [
        Scenario,
        FixedDist,
        UniformDist,
        PercentileBounds,
        ConcurrencyLoad,
        RateLoad,
        TraceLoad,
        DatasetSpec,
        PrefixSpec,
        SessionSpec,
        EmpiricalDist,
    ]
    seen: set[type[BaseModel]] = set()
    while models:
        m = models.pop()
        if m in seen:
            continue
        seen.add(m)
        for name, info in m.model_fields.items():
            assert info.description, f"{m.__name__}.{name}"
            models.extend(models_in(info.annotation))
    assert len(seen) >= 20
