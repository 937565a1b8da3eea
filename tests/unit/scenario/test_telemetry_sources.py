"""telemetry.dcgm and telemetry.prometheus as a scenario file gives them: one line when bad."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.errors import ScenarioError
from loadgen.results.files import resolved_scenario
from loadgen.scenario import Scenario, load_scenario
from loadgen.scenario.inputs import scenario_secrets
from loadgen.scenario.telemetry_sources import dcgm_metrics_url

HEAD = "target: {url: mock}\nload: {concurrency: [1], requests_per_step: 2}\n"


def _load(tmp_path: Path, telemetry: str) -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + f"telemetry: {telemetry}\n")
    return load_scenario(path)


@pytest.mark.parametrize(
    ("telemetry", "line"),
    [
        ("{dcgm: 'ftp://node:9400'}", "telemetry.dcgm: expected http[s]://host[:port][/path]: "
         "the scheme must be http or https (got 'ftp://node:9400')"),
        ("{dcgm: mock}", "telemetry.dcgm: expected http[s]://host[:port][/path]: `mock` is no "
         "telemetry source"),
        ("{dcgm: [http://a:1, http://a:1]}", "telemetry.dcgm: each dcgm-exporter URL once"),
        ("{prometheus: {url: http://p:9090, queries: {}}}",
         "telemetry.prometheus.queries: give at least one named PromQL query"),
        ("{prometheus: {url: http://p:9090}}", "telemetry.prometheus.queries: required field"),
        ("{prometheus: {url: 'http://p:9090/?x=1', queries: {a: up}}}",
         "telemetry.prometheus.url: expected http[s]://host[:port][/path]: a base URL takes no "
         "query"),
        ("{prometheus: {url: http://p, queries: {'my-q': up}}}",
         "telemetry.prometheus.queries: query name 'my-q': expected letters, digits and _"),
        ("{prometheus: {url: http://p, queries: {a: '  '}}}",
         "telemetry.prometheus.queries: query 'a' is empty: expected a PromQL expression"),
        ("{prometheus: {url: http://p, queries: {a: up}, step_s: 0}}",
         "telemetry.prometheus.step_s: Input should be greater than or equal to 0.001"),
        ("{prometheus: {url: http://p, queries: {a: up}, token_env: LOADGEN_TEST_NO_SUCH}}",
         "telemetry.prometheus.token_env: the environment variable LOADGEN_TEST_NO_SUCH is not "
         "set; expected it to hold Prometheus's bearer token"),
    ],
)  # fmt: skip
def test_bad_sources_are_one_line(tmp_path: Path, telemetry: str, line: str) -> None:
    with pytest.raises(ScenarioError) as err:
        _load(tmp_path, telemetry)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{tmp_path / 's.yaml'}: ")
    assert line in text


def test_one_url_is_a_list_and_a_bare_host_means_its_metrics() -> None:
    assert dcgm_metrics_url("http://n:9400") == "http://n:9400/metrics"
    assert dcgm_metrics_url("http://n:9400/") == "http://n:9400/metrics"
    assert dcgm_metrics_url("http://n:9400/metrics") == "http://n:9400/metrics"
    assert dcgm_metrics_url("http://proxy/dcgm/n1") == "http://proxy/dcgm/n1"


def test_secrets_are_kept_out_of_the_resolved_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOADGEN_TEST_PROM", "tok-123456789")
    sc = _load(
        tmp_path,
        "{dcgm: 'http://u:dpw-4242@n:9400', prometheus: {url: 'http://v:ppw-4242@p:9090', "
        "queries: {a: up}, token_env: LOADGEN_TEST_PROM}}",
    )
    secrets = scenario_secrets(sc)
    assert {"tok-123456789", "dpw-4242", "ppw-4242"} <= set(secrets)
    tel = resolved_scenario(sc)["telemetry"]
    assert tel["dcgm"] == ["http://n:9400"]
    assert tel["prometheus"]["url"] == "http://p:9090"
    assert tel["prometheus"]["token_env"] == "LOADGEN_TEST_PROM"  # the name, not the value
    assert "tok-123456789" not in str(tel)
