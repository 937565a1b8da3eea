"""A value that does not fit its Parquet column is refused or made null, never cut."""

from __future__ import annotations

import pytest

from loadgen.export.parquet import _cell, _telemetry_cell


def test_a_step_value_of_the_wrong_type_is_refused_not_truncated() -> None:
    assert _cell(3, "int64?", "requests_ok") == 3
    assert _cell(3, "float64?", "rate") == 3.0
    assert _cell(None, "int64?", "concurrency") is None
    with pytest.raises(TypeError, match=r"requests_ok: 1\.5 is no int64"):
        _cell(1.5, "int64?", "requests_ok")  # pyarrow itself would store 1
    with pytest.raises(TypeError, match="is no int64"):
        _cell(True, "int64?", "requests_ok")


@pytest.mark.parametrize(
    ("value", "base", "want"),
    [
        (35014049792, "int64", 35014049792),
        (35014049792.0, "int64", 35014049792),
        (1.5, "int64", None),
        (42, "float64", 42.0),
        (float("nan"), "float64", None),
        (True, "float64", None),
        ("counter", "string", "counter"),
        (3, "string", None),
        ("x", "float64", None),
    ],
)
def test_a_telemetry_value_becomes_its_columns_type_or_null(
    value: object, base: str, want: object
) -> None:
    assert _telemetry_cell(value, base) == want
