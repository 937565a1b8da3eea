"""One redaction for every string loadgen stores or prints: URLs, echoed secrets, body keys.

Probes of issue #20, each of which leaked on the old code:

- a password with an unencoded ``@`` (``http://user:p@ss-SECRET@host/``): the
  text redaction stopped at the first ``@`` and printed ``ss-SECRET@host``
  (target_check.warnings, the "is the server running at" hint);
- a password with an unencoded ``/`` or ``?``, or a ``?key=`` query: the URL is
  refused, and the refusal echoed it whole;
- a configured secret (API key, header value, URL password) that a server
  echoes: nothing knew the values to look for;
- ``extra_body`` keys ``passphrase``, ``auth_header``, ``bearer``, ``jwt``,
  ``session_cookies``, ``access_tokens``: written to the resolved scenario.yaml.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.redact import (
    REDACTED,
    redact_body,
    redact_text,
    secret_key,
    set_secrets,
    strip_userinfo,
)
from loadgen.results.files import write_resolved_scenario
from loadgen.scenario.load import parse_scenario

LOAD = "load: {concurrency: [1], requests_per_step: 1}\n"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:p@ss-SECRET@host:8000/v1", "http://host:8000/v1"),
        ("http://user:pa/ss-SECRET@host/v1", "http://host/v1"),
        ("http://user:pa?ss-SECRET@host/", "http://host/"),
        ("http://user:pa#ss-SECRET@host/", "http://host/"),
        ("https://host/?key=SECRET&alt=json", f"https://host/?key={REDACTED}&alt=json"),
        ("https://host/x?api-key=SECRET#f", f"https://host/x?api-key={REDACTED}#f"),
        ("https://host/x?access_token=SECRET", f"https://host/x?access_token={REDACTED}"),
    ],
)
def test_a_url_loses_its_userinfo_and_key_like_query_values(url: str, shown: str) -> None:
    assert strip_userinfo(url) == shown
    assert redact_text(f"GET {url} failed") == f"GET {shown} failed"
    assert redact_text(f"(got {url!r})") == f"(got {shown!r})"
    assert "SECRET" not in redact_text(f"see <{url}>; and {url}, again")


def test_a_url_without_userinfo_keeps_its_host_path_and_plain_query() -> None:
    url = "http://host:9/base/v1?alt=json&max=5"
    assert strip_userinfo(url) == url and redact_text(url) == url
    assert strip_userinfo("http://u@host/a/@b") == "http://host/a/@b"  # '@' in the path


@pytest.mark.parametrize(
    "field",
    [
        "target: {url: 'http://user:pa/ss-SECRET@127.0.0.1:9/', model: m}",
        "target: {url: 'http://127.0.0.1:9/?key=SECRET', model: m}",
        "target: {url: 'http://user:pa?ss-SECRET@127.0.0.1:9/', model: m}",
        "target: {urls: ['http://127.0.0.1:9', 'http://u:pa/ss-SECRET@127.0.0.1:8/'], model: m}",
        "telemetry: {server_metrics: 'http://127.0.0.1:9/metrics?token=SECRET'}",
        "telemetry: {agents: ['http://u:pa/ss-SECRET@127.0.0.1:9']}",
    ],
)
def test_a_refused_url_is_not_echoed_with_its_secret(field: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(field + "\n" + LOAD, "s.yaml")
    line = str(exc.value)
    assert "SECRET" not in line and line.startswith("s.yaml: ") and "\n" not in line


def test_every_configured_secret_is_redacted_in_the_forms_a_server_echoes() -> None:
    set_secrets(["sk-KEY-123456", "alice:p%40ss%20word", "Bearer tok/en+1", "ab"])
    echoed = [
        "invalid api key sk-KEY-123456",
        '{"error": "key \\"sk-KEY-123456\\" revoked"}',
        "basic " + base64.b64encode(b"alice:p@ss word").decode(),  # userinfo as Basic auth
        "user alice:p@ss word",  # the URL's userinfo decoded
        "header Bearer tok/en+1",
        '{"auth": "Bearer tok\\/en+1"}',  # JSON may escape the slash
    ]
    for text in echoed:
        out = redact_text(text)
        assert REDACTED in out, (text, out)
        assert "sk-KEY" not in out and "p@ss" not in out and "tok/en" not in out, out
    assert redact_text("a cab in abu dhabi") == "a cab in abu dhabi"  # too short to search
    set_secrets([])
    assert redact_text("invalid api key sk-KEY-123456") == "invalid api key sk-KEY-123456"


SECRET_KEYS = [
    "passphrase",
    "auth_header",
    "bearer",
    "jwt",
    "session_cookies",
    "access_tokens",
    "api_key",
    "client_credentials",
    "apiKey",
    "X-Api-Key",
    "refreshToken",
    "password",
    "client_secret",
    "signature",
    "key",
]
PLAIN_KEYS = {
    "max_tokens": 64,
    "min_tokens": 1,
    "max_completion_tokens": 64,
    "top_k": 20,
    "top_p": 0.9,
    "ignore_eos": True,
    "stop_token_ids": [2, 3],
    "skip_special_tokens": False,
    "temperature": 0.0,
    "stream_options": {"include_usage": True},
    "bypass_cache": True,
}


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_credential_like_key_is_a_secret(key: str) -> None:
    assert secret_key(key, "value")
    assert redact_body({"nested": [{key: "value"}]}) == {"nested": [{key: REDACTED}]}


@pytest.mark.parametrize(("key", "value"), PLAIN_KEYS.items())
def test_a_generation_parameter_is_not(key: str, value: object) -> None:
    assert not secret_key(key, value)
    assert redact_body({key: value}) == {key: value}


def test_the_resolved_scenario_holds_no_credential_like_body_value(tmp_path: Path) -> None:
    body = {k: f"PW-{i}" for i, k in enumerate(SECRET_KEYS)}
    body["metadata"] = {"session_cookies": {"sid": "PW-SID"}, "access_tokens": ["PW-A"]}
    body.update(PLAIN_KEYS)
    flow = yaml.safe_dump(body, default_flow_style=True).strip()
    text = f"target: {{extra_body: {flow}}}\n"
    sc = parse_scenario(text + LOAD, "s.yaml")
    assert sc.target.extra_body["passphrase"] == "PW-0"  # still sent
    path = tmp_path / "scenario.yaml"
    write_resolved_scenario(sc, path)
    written = path.read_text()
    assert "PW-" not in written
    kept = yaml.safe_load(written)["target"]["extra_body"]
    assert {k: kept[k] for k in PLAIN_KEYS} == PLAIN_KEYS
