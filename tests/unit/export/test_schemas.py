"""The Parquet schemas: every Record field typed from its annotation, steps typed, cells checked."""

from __future__ import annotations

from dataclasses import fields

import pytest

from loadgen.export import schemas
from loadgen.export.schemas import STEP_TYPES, family_type, record_columns
from loadgen.records import Record
from loadgen.report.step_table import BASE_COLUMNS, OPTIONAL_COLUMNS


def test_every_record_field_has_a_column_in_order() -> None:
    cols = dict(record_columns())
    assert list(cols) == [f.name for f in fields(Record)]
    assert cols["step"] == "int64" and cols["start_ns"] == "int64"
    assert cols["first_token_ns"] == "int64?" and cols["session"] == "int64?"
    assert cols["token_ns"] == "list<int64>"
    assert cols["ok"] == "bool" and cols["valid_output"] == "bool?"
    assert cols["audio_s"] == "float64" and cols["error_kind"] == "string?"


def test_a_record_field_of_a_new_type_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "ANNOTATION_TYPES", {"int": "int64"})
    with pytest.raises(TypeError, match="no Parquet type for 'bool'"):
        record_columns()


def test_every_fixed_and_optional_steps_csv_column_has_a_type() -> None:
    optional = [name for names, _ in OPTIONAL_COLUMNS for name in names]
    assert not set(BASE_COLUMNS) - set(STEP_TYPES)
    assert not set(optional) - set(STEP_TYPES)
    assert STEP_TYPES["ttft_ms_count"] == "int64?" and STEP_TYPES["ttft_ms_p99"] == "float64?"


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([True, None, False], "bool?"),
        ([1, 2, None], "int64?"),
        ([1, 2.5], "float64?"),
        (["http://a", None], "string?"),
        ([None, None], "string?"),
    ],
)
def test_a_per_run_column_is_typed_by_its_values(values: list[object], kind: str) -> None:
    assert family_type("endpoint0_x", values) == kind


def test_arrow_types_and_nullability() -> None:
    pa = pytest.importorskip("pyarrow")
    schema = schemas.arrow_schema(
        [("a_ns", "int64"), ("b", "float64?"), ("errors", "map<string,int64>?")]
    )
    assert schema.field("a_ns").type == pa.int64() and not schema.field("a_ns").nullable
    assert schema.field("a_ns").metadata == {b"unit": b"ns, loadgen monotonic clock"}
    assert schema.field("b").nullable
    assert schema.field("errors").type == pa.map_(pa.string(), pa.int64())
    with pytest.raises(ValueError, match="no arrow type"):
        schemas.arrow_type("decimal")
