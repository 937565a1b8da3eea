"""The mock's schema instances are valid for their schema; its broken ones are not."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema

from loadgen.mock.schema_gen import broken, instance
from loadgen.workload.tools import synthetic_tools

DATA = Path(__file__).parents[2] / "scenarios" / "data"
SCHEMAS = [
    json.loads((DATA / "answer-schema.json").read_text()),
    *(t["parameters"] for t in json.loads((DATA / "tools.json").read_text())),
    *(t.parameters for t in synthetic_tools(4, 7, 1)),
    {"type": "array", "items": {"type": "integer", "minimum": 3, "maximum": 4}, "minItems": 2},
    {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
    {"type": ["null", "string"]},
    {"const": "x"},
    {"type": "string", "minLength": 30, "maxLength": 31},
    {"type": "object", "properties": {"o": {"type": "object", "properties": {"n": {"type": "null"}},
                                             "required": ["n"]}}, "required": ["o"]},
]  # fmt: skip


def test_instances_are_valid_and_broken_ones_are_not() -> None:
    for i, schema in enumerate(SCHEMAS):
        for seed in range(20):
            rng = random.Random(f"{i}:{seed}")
            value = instance(schema, rng)
            jsonschema.validate(value, schema)
            if schema.get("type") != "object":
                continue
            text = broken(schema, value, rng)
            try:
                again = json.loads(text)
            except json.JSONDecodeError:
                continue  # cut short
            assert not jsonschema.Draft202012Validator(schema).is_valid(again), (schema, text)
