"""The typed parts of summary.json that were dicts write exactly what the dicts wrote."""

from __future__ import annotations

import json

from loadgen.scenario import SlaSpec
from loadgen.summary import ClockAnchor, SlaBounds, Summary, WorkloadInfo
from loadgen.telemetry.rows import GpuSample, HostSample, ServerScrape, parse_sample

#: as loadgen.workload.describe.describe_workload writes it, with every optional part
WORKLOAD = {
    "prompt_length_source": "dataset",
    "dataset": "data/prompts.jsonl",
    "dataset_rows": 120,
    "output_tokens": "fixed 5",
    "tokenizer": "gpt2",
    "prefix": {"groups": 4, "tokens": 64, "share": None},
    "sessions": {"turns": "fixed 3", "think_time_s": None},
}


def _summary(**fields: object) -> Summary:
    return Summary(
        loadgen_version="0",
        name="n",
        run_id="r",
        target_url="http://127.0.0.1:1",
        api="tgi",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=1, wall_ns=2),
        **fields,  # type: ignore[arg-type]
    )


def test_the_workload_writes_the_keys_it_was_given_in_order() -> None:
    s = _summary(workload=dict(WORKLOAD))
    assert isinstance(s.workload, WorkloadInfo)
    written = json.loads(s.model_dump_json())["workload"]
    assert list(written) == list(WORKLOAD) and written == WORKLOAD
    short = {"prompt_length_source": "server", "prompt_tokens": "uniform [64, 256]"}
    assert json.loads(_summary(workload=short).model_dump_json())["workload"] == short


def test_a_dict_assigned_later_becomes_the_model() -> None:
    s = _summary()
    s.workload = dict(WORKLOAD)  # type: ignore[assignment]  # what the runner does
    assert isinstance(s.workload, WorkloadInfo) and s.workload.dataset_rows == 120
    assert s.workload.prefix is not None and s.workload.prefix.groups == 4


def test_the_sla_block_is_the_scenario_s_as_the_runner_dumps_it() -> None:
    spec = SlaSpec.model_validate({"ttft_ms": {"p99": 400, "mean": 100}, "max_error_rate": 0.01})
    block = {k: v for k, v in spec.model_dump(exclude_none=True).items() if v != {}}
    s = _summary(sla=block)
    assert isinstance(s.sla, SlaBounds)
    written = json.loads(s.model_dump_json())["sla"]
    assert list(written) == list(block) and written == block
    assert list(written["ttft_ms"]) == ["mean", "p99"]
    assert s.sla.latency_bounds() == [("ttft_ms", "mean", 100.0), ("ttft_ms", "p99", 400.0)]
    assert json.loads(_summary().model_dump_json())["sla"] == {}


def test_a_summary_read_back_writes_the_same_bytes() -> None:
    s = _summary(workload=dict(WORKLOAD), sla={"tpot_ms": {"p50": 10.0}, "ttft_of": "any"})
    text = s.model_dump_json(indent=2)
    assert Summary.model_validate_json(text).model_dump_json(indent=2) == text


def test_agent_rows_parse_into_samples() -> None:
    gpu = parse_sample({"gpu": 1, "util_gpu_pct": 50, "energy_source": "counter", "x": 1}, 7)
    assert gpu == GpuSample(7, 1, util_pct=50, energy_source="counter")
    host = parse_sample({"kind": "host", "cpu_util_pct": 20.0, "mem_used_bytes": True}, 8)
    assert host == HostSample(8, cpu_util_pct=20.0)  # a bool is not a number
    assert parse_sample({"kind": "gpu", "gpu": "0"}, 9) is None


def test_a_scrape_line_keeps_the_metric_order_and_leaves_out_what_is_missing() -> None:
    scrape = ServerScrape(waiting=2.0, running=1.0, generation_tokens_total=9.0, engine="tgi")
    assert list(scrape.as_dict().items()) == [
        ("running", 1.0),
        ("waiting", 2.0),
        ("generation_tokens_total", 9.0),
        ("engine", "tgi"),
    ]
