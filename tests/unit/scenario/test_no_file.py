"""A run without a file: the defaults, the flags over them, and the resolved file read back."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.results.files import resolved_scenario
from loadgen.scenario import Scenario, load_scenario, parse_scenario
from loadgen.scenario.defaults import (
    DEFAULT_CONCURRENCY,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_REQUESTS,
    no_file_scenario,
    safe_name,
)
from loadgen.scenario.dists import FixedDist
from loadgen.scenario.loadspec import ConcurrencyLoad, RateLoad
from loadgen.scenario.overrides import check_lengths_apply, flag_overrides

URL = "http://127.0.0.1:8000"


def scenario(**flags: object) -> Scenario:
    return no_file_scenario(flag_overrides(flags))


def test_the_defaults_are_the_documented_sweep() -> None:
    sc = scenario(url=URL, model="m")
    assert sc.target.url == URL and sc.target.model == "m"
    assert sc.target.api == "openai-chat"
    assert sc.workload.prompt_tokens == FixedDist(dist="fixed", value=DEFAULT_PROMPT_TOKENS)
    assert sc.workload.output_tokens == FixedDist(dist="fixed", value=DEFAULT_OUTPUT_TOKENS)
    assert (DEFAULT_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS) == (512, 128)
    assert isinstance(sc.load, ConcurrencyLoad)
    assert sc.load.concurrency == list(DEFAULT_CONCURRENCY) == [1, 4, 16, 64]
    assert sc.load.requests_per_step == DEFAULT_REQUESTS == 100
    assert not any(b.items() for b in (sc.sla.ttft_ms, sc.sla.tpot_ms, sc.sla.e2e_ms))


def test_without_model_a_real_server_gets_auto_and_the_mock_its_own_name() -> None:
    assert scenario(url=URL).target.model == "auto"
    mock = scenario(url="mock")
    assert mock.target.is_mock and mock.target.model == "mock-model"


def test_the_name_comes_from_the_model_or_else_the_host() -> None:
    assert scenario(url=URL, model="Qwen/Qwen2.5-7B").name == "Qwen-Qwen2.5-7B"
    assert scenario(url="http://gpu-box.internal:8000").name == "gpu-box.internal"
    assert scenario(url="mock").name == "mock"
    assert safe_name("../../etc") == "etc" and safe_name("///") == "run"


def test_the_flags_shape_the_run() -> None:
    sc = scenario(
        url=URL,
        api="openai-completions",
        rate="2,4",
        duration=30.0,
        prompt_tokens=1000,
        output_tokens=50,
        workers="2",
    )
    assert sc.target.api == "openai-completions"
    assert isinstance(sc.load, RateLoad)
    assert sc.load.rate == [2.0, 4.0]
    assert sc.load.duration_s == 30.0 and sc.load.requests_per_step is None
    assert sc.workload.prompt_tokens == FixedDist(dist="fixed", value=1000)
    assert sc.workload.output_tokens == FixedDist(dist="fixed", value=50)
    assert sc.load.workers == 2


def test_neither_file_nor_url_is_one_line_naming_both() -> None:
    with pytest.raises(ScenarioError) as exc:
        scenario(model="m", concurrency="1,2")
    msg = str(exc.value)
    assert "\n" not in msg and "SCENARIO" in msg and "--url" in msg


def test_a_bad_flag_is_blamed_on_the_flag() -> None:
    with pytest.raises(ScenarioError, match=r"^command line --url: target.url"):
        scenario(url="ftp://x")
    with pytest.raises(ScenarioError, match=r"^command line --prompt-tokens: workload"):
        scenario(url=URL, prompt_tokens=10**12)


def test_the_resolved_scenario_of_a_no_file_run_loads_back_the_same(tmp_path: Path) -> None:
    sc = scenario(url=URL, model="m", concurrency="1,2", requests=7, output_tokens=9)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(resolved_scenario(sc), sort_keys=False))
    again = load_scenario(path)
    assert again == sc


def test_prompt_and_output_token_flags_replace_a_files_distributions() -> None:
    text = """
target: {url: "http://127.0.0.1:9", model: m}
workload:
  prompt_tokens: {dist: uniform, min: 10, max: 100}
  output_tokens: {dist: normal, mean: 50, std: 5}
load: {concurrency: [1], requests_per_step: 2}
"""
    sc = parse_scenario(text, "s.yaml", flag_overrides({"prompt_tokens": 64, "output_tokens": 8}))
    assert sc.workload.prompt_tokens == FixedDist(dist="fixed", value=64)
    assert sc.workload.output_tokens == FixedDist(dist="fixed", value=8)


def test_a_length_flag_the_scenario_would_ignore_is_refused() -> None:
    dataset = """
target: {url: "http://127.0.0.1:9", model: m}
workload: {dataset: {path: d.jsonl}}
load: {concurrency: [1], requests_per_step: 2}
"""
    sc = parse_scenario(dataset, "s.yaml", flag_overrides({"prompt_tokens": 64}))
    with pytest.raises(ScenarioError, match=r"^command line --prompt-tokens: workload.dataset"):
        check_lengths_apply(sc, {"prompt_tokens": 64})
    check_lengths_apply(sc, {"output_tokens": 8})  # a dataset row's answer falls back to it
    trace = """
target: {url: "http://127.0.0.1:9", model: m}
load: {mode: trace, trace: t.jsonl}
"""
    sc = parse_scenario(trace, "s.yaml")
    with pytest.raises(ScenarioError, match=r"^command line --output-tokens: load.mode trace"):
        check_lengths_apply(sc, {"output_tokens": 8})
