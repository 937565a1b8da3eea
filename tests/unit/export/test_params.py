"""The scenario as MLflow parameters: dotted keys, JSON values, secrets redacted, limits kept."""

from __future__ import annotations

from loadgen.export.params import MAX_KEY, MAX_VALUE, flatten
from loadgen.redact import set_secrets


def test_nested_keys_are_dotted_and_values_are_json_text() -> None:
    got = flatten(
        {
            "name": "demo",
            "load": {"mode": "concurrency", "concurrency": [1, 4], "stop_early": None},
            "workload": {"prompt_tokens": {"dist": "fixed", "value": 64}, "seed": 0},
            "target": {"stream": True, "extra_body": {}},
        }
    )
    assert got == {
        "name": "demo",
        "load.mode": "concurrency",
        "load.concurrency": "[1,4]",
        "load.stop_early": "null",
        "workload.prompt_tokens.dist": "fixed",
        "workload.prompt_tokens.value": "64",
        "workload.seed": "0",
        "target.stream": "true",
        "target.extra_body": "{}",
    }


def test_secrets_are_redacted_and_counts_named_like_tokens_are_not() -> None:
    set_secrets(["sk-configured-123456"])
    try:
        got = flatten(
            {
                "target": {
                    "url": "http://bob:hunter22@127.0.0.1:8000",
                    "headers": {"Authorization": "Bearer sk-1", "Accept": "text/event-stream"},
                    "extra_body": {"api_key": "sk-2", "top_k": 5},
                    "model": "uses sk-configured-123456 inside",
                },
                "workload": {"output_tokens": {"dist": "fixed", "value": 8}},
            }
        )
    finally:
        set_secrets([])
    assert got["target.url"] == "http://127.0.0.1:8000"
    assert got["target.headers.Authorization"] == "<redacted>"
    assert got["target.headers.Accept"] == "text/event-stream"
    assert got["target.extra_body.api_key"] == "<redacted>"
    assert got["target.extra_body.top_k"] == "5"
    assert "sk-configured-123456" not in got["target.model"]
    assert got["workload.output_tokens.value"] == "8"  # a count, not a credential


def test_keys_keep_mlflows_characters_and_long_values_are_cut() -> None:
    got = flatten({"extra": {"we$ird key!": "x" * (MAX_VALUE + 10)}, "k" * 300: 1})
    assert got["extra.we_ird key_"] == "x" * (MAX_VALUE - 3) + "..."
    assert len(got["extra.we_ird key_"]) == MAX_VALUE
    (long_key,) = (k for k in got if k.startswith("kkk"))
    assert len(long_key) == MAX_KEY and long_key.endswith("...")
