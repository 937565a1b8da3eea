"""No secret reaches an output: URL userinfo, header values, credential-like body keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.redact import REDACTED, redact_body, redact_headers, redact_text, strip_userinfo
from loadgen.results.files import write_resolved_scenario
from loadgen.scenario.load import parse_scenario
from loadgen.summary import ClockAnchor, Summary


def test_strip_userinfo() -> None:
    assert strip_userinfo("http://user:pw@host:8000/base") == "http://host:8000/base"
    assert strip_userinfo("https://token@host") == "https://host"
    assert strip_userinfo("http://host/x") == "http://host/x"
    assert strip_userinfo("mock") == "mock"


def test_redact_text_finds_every_url() -> None:
    text = "GET http://u:s3cr3t@a/v1 failed; see https://x@b:1/metrics"
    assert redact_text(text) == "GET http://a/v1 failed; see https://b:1/metrics"


def test_headers_shown_only_when_harmless() -> None:
    out = redact_headers({"Content-Type": "application/json", "x-goog-api-key": "k", "apikey": "k"})
    assert out == {
        "Content-Type": "application/json",
        "x-goog-api-key": REDACTED,
        "apikey": REDACTED,
    }


def test_credential_like_body_keys() -> None:
    body = {"api_key": "k", "max_tokens": 5, "nested": {"accessToken": "t"}, "stop_token_ids": [1]}
    assert redact_body(body) == {
        "api_key": REDACTED,
        "max_tokens": 5,
        "nested": {"accessToken": REDACTED},
        "stop_token_ids": [1],
    }


def test_resolved_scenario_and_summary_hold_no_secret(tmp_path: Path) -> None:
    text = """
target:
  url: http://alice:PW-URL@127.0.0.1:9/v1
  model: m
  headers: {Ocp-Apim-Subscription-Key: PW-HDR, User-Agent: ua}
  extra_body: {api_key: PW-BODY, ignore_eos: true}
telemetry: {server_metrics: 'http://bob:PW-TEL@127.0.0.1:9/metrics'}
load: {concurrency: [1], requests_per_step: 1}
"""
    sc = parse_scenario(text, "s.yaml")
    assert sc.target.headers["Ocp-Apim-Subscription-Key"] == "PW-HDR"  # still sent
    path = tmp_path / "scenario.yaml"
    write_resolved_scenario(sc, path)
    written = path.read_text()
    assert "PW-" not in written
    assert yaml.safe_load(written)["target"]["headers"]["User-Agent"] == "ua"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind
    summary = Summary(
        loadgen_version="0",
        name="n",
        run_id="r",
        target_url=sc.target.url,
        api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0),
    )
    assert "PW-" not in summary.model_dump_json()


def test_a_refused_url_is_not_echoed_with_its_password() -> None:
    text = "target: {url: 'http://u:PW-ECHO@[::1', model: m}\nload: {concurrency: [1]}\n"
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(text, "s.yaml")
    assert "PW-ECHO" not in str(exc.value) and "target.url" in str(exc.value)
