"""docs/scenario.md documents every scenario field, and every field has a description."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from loadgen.scenario.models import FixedDist, PercentileBounds, Scenario, UniformDist

DOC = (Path(__file__).parents[3] / "docs" / "scenario.md").read_text()


def field_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        path = prefix + name
        out.append(path)
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and ann is not PercentileBounds:
            out.extend(field_paths(ann, path + "."))
    return out


def test_every_field_is_documented() -> None:
    missing = [p for p in field_paths(Scenario) if f"`{p}`" not in DOC]
    assert not missing


def test_every_field_has_a_description() -> None:
    models: list[type[BaseModel]] = [Scenario, FixedDist, UniformDist, PercentileBounds]
    seen: set[type[BaseModel]] = set()
    while models:
        m = models.pop()
        if m in seen:
            continue
        seen.add(m)
        for name, info in m.model_fields.items():
            assert info.description, f"{m.__name__}.{name}"
            ann = info.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                models.append(ann)
    assert len(seen) >= 8
