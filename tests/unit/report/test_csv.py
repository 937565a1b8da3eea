from __future__ import annotations

import csv
import io

from loadgen.records import Record
from loadgen.report.step_table import BASE_COLUMNS, render_steps_csv, step_row
from loadgen.report.telemetry import telemetry_fields
from loadgen.summary import LittleCheck, Summary


def _rows(summary: Summary) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(render_steps_csv(summary))))


def test_one_row_per_step_with_flat_latency_columns(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    rows = _rows(summary)
    assert len(rows) == 4
    assert [r["concurrency"] for r in rows] == ["1", "4", "16", "32"]
    assert [r["load_value"] for r in rows] == ["1.0", "4.0", "16.0", "32.0"]
    for row, step in zip(rows, summary.steps, strict=True):
        assert float(row["ttft_ms_p99"] or "nan") == (step.ttft_ms.p99 or float("nan")) or (
            step.ttft_ms.p99 is None and row["ttft_ms_p99"] == ""
        )
    assert float(rows[0]["ttft_ms_p50"]) == summary.steps[0].ttft_ms.p50
    assert float(rows[2]["tpot_ms_max"]) == summary.steps[2].tpot_ms.max
    assert float(rows[1]["output_tokens_per_s"]) == summary.steps[1].throughput.output_tokens_per_s
    assert [r["sla_verdict"] for r in rows] == ["met", "met", "missed", "missed"]
    assert [r["sla_cause"] for r in rows] == ["met", "met", "missed", "no_success"]
    assert rows[3]["sla_reason"] == "no successful request"
    assert rows[2]["sla_failed_checks"] == "ttft_ms.p50"
    assert rows[2]["client_saturated"] == "True"


def test_empty_step_has_empty_cells_and_its_errors(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    dead = _rows(summary)[3]
    assert dead["requests_ok"] == "0"
    assert dead["requests_failed"] == "5"
    assert dead["error_rate"] == "1.0"
    assert dead["errors"] == "http_503:5"
    assert dead["ttft_ms_p99"] == "" and dead["e2e_ms_mean"] == ""
    assert dead["ttft_ms_count"] == "0"


def test_cost_and_telemetry_columns_follow_the_base_columns(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = run_data
    text = render_steps_csv(summary)
    header = text.splitlines()[0].split(",")
    assert header[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)
    extra = header[len(BASE_COLUMNS) :]
    assert "cost_usd_per_million_output_tokens" in extra
    assert "telemetry_gpu_util_pct_mean" in extra
    rows = _rows(summary)
    assert float(rows[1]["cost_usd_per_million_output_tokens"]) == 5.0
    assert float(rows[0]["telemetry_gpu_mem_used_gib_peak"]) == 8.0
    assert float(rows[0]["telemetry_server_kv_usage_pct_max"]) == 50.0
    assert rows[1]["telemetry_gpu_power_w_mean"] == ""  # step 1 has no power
    assert rows[3]["cost_usd_per_hour"] == ""


def test_pandas_reads_it_typed(run_data: tuple[Summary, list[Record]]) -> None:
    pd = __import__("pytest").importorskip("pandas")
    summary, _ = run_data
    df = pd.read_csv(io.StringIO(render_steps_csv(summary)))
    assert df["sla_verdict"].tolist() == ["met", "met", "missed", "missed"]
    assert df["ttft_ms_p99"].isna().tolist() == [False, False, False, True]


def test_telemetry_fields_without_telemetry(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    assert telemetry_fields(summary.steps[2]) == {}
    assert telemetry_fields(summary.steps[0])["gpu_util_pct_max"] == 55.0
    assert step_row(summary.steps[2])["little_flagged"] is None  # no Little check: empty cells


def test_littles_law_columns(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    check = LittleCheck(mean_in_flight=7.5, predicted=5.0, ratio=1.5, flagged=True)
    row = step_row(summary.steps[1].model_copy(update={"little": check}))
    assert (row["little_mean_in_flight"], row["little_predicted"]) == (7.5, 5.0)
    assert (row["little_ratio"], row["little_flagged"]) == (1.5, True)
