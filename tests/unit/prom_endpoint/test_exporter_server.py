"""The exporter's HTTP side and its address: loopback by default, a token beyond it."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.prom_endpoint import Exporter
from loadgen.records import Record
from loadgen.scenario import load_scenario
from loadgen.scenario.listen import needs_token, parse_listen
from loadgen.scenario.overrides import flag_overrides


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9348", ("127.0.0.1", 9348)),
        ("0", ("127.0.0.1", 0)),
        ("0.0.0.0:9348", ("0.0.0.0", 9348)),
        ("localhost:1", ("localhost", 1)),
        ("[::1]:9348", ("::1", 9348)),
    ],
)
def test_an_address_is_host_and_port_with_loopback_for_a_bare_port(
    text: str, expected: tuple[str, int]
) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["", "x", "9348:", ":9348", "::1:9348", "h:70000", "h:-1"])
def test_a_bad_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected \[HOST:\]PORT"):
        parse_listen(text)


def test_beyond_loopback_needs_a_token() -> None:
    assert not needs_token("9348") and not needs_token("[::1]:1") and not needs_token("localhost:1")
    assert needs_token("0.0.0.0:9348") and needs_token("metrics.example:9348")


def write(tmp_path: Path, telemetry: dict[str, object]) -> Path:
    doc = {
        "name": "t",
        "target": {"url": "mock", "model": "m"},
        "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 4},
        "telemetry": telemetry,
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_scenario_refuses_a_public_bind_without_a_token_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, {"serve_metrics": "0.0.0.0:9348"})
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    line = str(err.value)
    assert "\n" not in line and "serve_metrics" in line and "serve_metrics_token_env" in line


def test_the_flags_set_the_fields_and_the_token_variable_must_be_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = {
        "serve_metrics": "0.0.0.0:9348",
        "serve_metrics_token_env": "PROMX_TOKEN",
        "serve_metrics_linger": 2.5,
    }
    monkeypatch.delenv("PROMX_TOKEN", raising=False)
    with pytest.raises(ScenarioError, match=r"serve_metrics_token_env.*PROMX_TOKEN"):
        load_scenario(write(tmp_path, {}), flag_overrides(flags))
    monkeypatch.setenv("PROMX_TOKEN", "s3cret")
    tel = load_scenario(write(tmp_path, {}), flag_overrides(flags)).telemetry
    assert (tel.serve_metrics, tel.serve_metrics_linger_s) == ("0.0.0.0:9348", 2.5)
    assert tel.serve_metrics_token_env == "PROMX_TOKEN"
    with pytest.raises(ScenarioError, match="--serve-metrics"):
        load_scenario(write(tmp_path, {}), flag_overrides({"serve_metrics": "nope"}))


def one_record() -> Record:
    return Record(step=0, id=0, warmup=False, request_id="a", prompt_tokens_requested=3,
                  max_tokens=4, sent_ns=1, end_ns=2, ok=True)  # fmt: skip


def test_metrics_need_the_token_when_one_is_set_and_health_does_not() -> None:
    exp = Exporter.start(
        "127.0.0.1", 0, token="s3cret", linger_s=0, run_id="r", scenario="s", model="m"
    )
    try:
        exp.metrics.record(one_record())
        url = exp.server.url
        assert httpx.get(url).status_code == 401
        wrong = httpx.get(url, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        good = httpx.get(url, headers={"Authorization": "Bearer s3cret"})
        assert good.status_code == 200
        assert 'loadgen_requests_total{error_kind="",phase="measured"' in good.text
        assert good.headers["content-type"].startswith("text/plain")
        base = url.removesuffix("/metrics")
        assert httpx.get(base + "/health").status_code == 200
        assert httpx.get(base + "/other").status_code == 404
    finally:
        exp.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_an_address_in_use_is_one_scenario_error_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ScenarioError, match=f"cannot listen on 127.0.0.1:{port}"):
            Exporter.start(
                "127.0.0.1", port, token=None, linger_s=0, run_id="r", scenario="s", model="m"
            )


def test_the_metrics_token_is_a_secret_kept_out_of_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loadgen.scenario.inputs import scenario_secrets

    monkeypatch.setenv("PROMX_TOKEN", "tok-3f9a")
    telemetry = {"serve_metrics": "9348", "serve_metrics_token_env": "PROMX_TOKEN"}
    sc = load_scenario(write(tmp_path, telemetry))
    assert "tok-3f9a" in scenario_secrets(sc)
