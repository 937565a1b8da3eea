"""The scenario file ``loadgen init`` writes, from what a probe found (no server here)."""

from __future__ import annotations

import pytest
import yaml

from loadgen.scenario import parse_scenario
from loadgen.scenario.defaults import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS
from loadgen.target.probe import METRICS_NAMES, ApiProbe, Probe
from loadgen.target.starter import CONTEXT_MARGIN, fit_lengths, found_lines, starter_text
from loadgen.workload.prompts import Calibration

URL = "http://127.0.0.1:8000"


def probe(**fields: object) -> Probe:
    base: dict[str, object] = {"url": URL, "models": ["m"], "model": "m"}
    return Probe(**{**base, **fields})  # type: ignore[arg-type]


def served(*apis: str, refused: dict[str, int] | None = None) -> list[ApiProbe]:
    out = [ApiProbe(api, "/x", 200) for api in apis]
    return out + [ApiProbe(api, "/x", status) for api, status in (refused or {}).items()]


@pytest.mark.parametrize("context", [None, 4096, 656])
def test_a_context_long_enough_keeps_the_default_lengths(context: int | None) -> None:
    assert fit_lengths(context) == (DEFAULT_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS)


@pytest.mark.parametrize("context", [655, 512, 128, 20])
def test_a_short_context_cuts_both_to_fit(context: int) -> None:
    prompt, output = fit_lengths(context)
    assert prompt >= 1 and output >= 1
    assert prompt + output + min(CONTEXT_MARGIN, context // 8) <= context
    assert output <= DEFAULT_OUTPUT_TOKENS


def test_a_vllm_server_gets_its_api_model_ignore_eos_metrics_and_calibration() -> None:
    p = probe(
        apis=served("openai-chat", "openai-completions", refused={"openai-embeddings": 404}),
        max_model_len=2048,
        max_model_len_from="GET /v1/models max_model_len",
        tokenize=Calibration(per_word=1.3, overhead=5.0, engine="vllm", chat_template=True),
        metrics=True,
        metrics_engine="vllm",
        engine="vllm",
        version="0.32.0",
        engine_from="GET /version",
    )
    text = starter_text(p, file="my.yaml")
    doc = yaml.safe_load(text)
    assert doc["target"] == {
        "url": URL,
        "api": "openai-chat",
        "model": "m",
        "extra_body": {"ignore_eos": True},
    }
    assert doc["workload"]["prompt_tokens"] == {"dist": "fixed", "value": 512}
    assert doc["workload"]["calibrate"] is True
    assert doc["telemetry"] == {"server_metrics": "target"}
    assert "sla" not in doc  # left for the user, commented
    assert "#   engine: vLLM 0.32.0, from GET /version" in text
    assert "openai-embeddings not served (404)" in text
    assert "loadgen run my.yaml" in text


def test_an_embedding_server_writes_an_embeddings_scenario_without_answers() -> None:
    p = probe(apis=served("openai-embeddings", refused={"openai-chat": 404}))
    sc = parse_scenario(starter_text(p), "init")
    assert sc.target.api == "openai-embeddings"
    assert "output_tokens" not in sc.workload.model_fields_set
    assert sc.target.extra_body == {}


def test_a_server_that_answered_nothing_still_gets_a_file_that_loads_and_says_so() -> None:
    p = probe(models=None, model=None, apis=served(refused={"openai-chat": 404}))
    text = starter_text(p)
    sc = parse_scenario(text, "init")
    assert sc.target.api == "openai-chat" and sc.target.model == "auto"
    assert "no API answered its probe" in text
    assert "telemetry" not in yaml.safe_load(text)


def test_a_key_the_server_asked_for_is_named_by_its_variable_never_written() -> None:
    p = probe(apis=served(refused={"openai-chat": 401}))
    assert "# api_key_env:" in starter_text(p)
    doc = yaml.safe_load(starter_text(p, api_key_env="MY_KEY"))
    assert doc["target"]["api_key_env"] == "MY_KEY"


def test_a_short_context_is_said_and_the_lengths_fit_it() -> None:
    p = probe(apis=served("openai-chat"), max_model_len=256, max_model_len_from="GET /props")
    doc = yaml.safe_load(starter_text(p))
    prompt = doc["workload"]["prompt_tokens"]["value"]
    output = doc["workload"]["output_tokens"]["value"]
    assert prompt + output <= 256


def test_odd_names_are_quoted_so_they_read_back_as_written() -> None:
    p = probe(models=["true", "1.5"], model="1.5", apis=served("openai-chat"))
    sc = parse_scenario(starter_text(p), "init")
    assert sc.target.model == "1.5"


def test_the_engine_told_only_by_metric_names_says_so() -> None:
    lines = found_lines(probe(engine="vllm", engine_from=METRICS_NAMES, metrics=True))
    assert lines[0] == "engine: vLLM, by its /metrics names (no version endpoint answered)"
