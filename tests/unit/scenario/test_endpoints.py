"""target.urls, target.routing and target.mock.replicas as the scenario reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.results.files import resolved_scenario, write_resolved_scenario
from loadgen.scenario.load import load_scenario, parse_scenario
from loadgen.scenario.overrides import flag_overrides
from loadgen.scenario.target_spec import MAX_ENDPOINTS, MAX_MOCK_REPLICAS, TargetSpec
from loadgen.target.mock import replica_args

REST = """
workload:
  prompt_tokens: {dist: fixed, value: 8}
  output_tokens: {dist: fixed, value: 4}
load: {mode: concurrency, concurrency: [1], requests_per_step: 4}
"""


def target(text: str) -> TargetSpec:
    return parse_scenario(f"target: {text}\n{REST}", "s.yaml").target


def refused(text: str) -> str:
    with pytest.raises(ScenarioError) as exc:
        target(text)
    line = str(exc.value)
    assert "\n" not in line and line.startswith("s.yaml: ")
    return line


def test_urls_are_the_endpoints_in_order() -> None:
    t = target('{urls: ["http://a:1", "https://b:2/llm"], model: m}')
    assert t.endpoints == ["http://a:1", "https://b:2/llm"]
    assert t.endpoint_count == 2 and not t.is_mock
    assert t.routing == "round_robin"  # the default


def test_one_url_is_one_endpoint_as_before() -> None:
    t = target('{url: "http://a:1", model: m}')
    assert (t.endpoints, t.endpoint_count, t.urls) == (["http://a:1"], 1, None)
    mock = target("{url: mock}")
    assert mock.is_mock and mock.endpoints == ["mock"] and mock.endpoint_count == 1


def test_mock_replicas_are_endpoints_of_the_mock() -> None:
    t = target("{url: mock, mock: {replicas: 3}, routing: least_in_flight}")
    assert t.is_mock and t.endpoint_count == 3 and t.routing == "least_in_flight"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{url: "http://a:1", urls: ["http://b:2"], model: m}',
            "s.yaml: target: give target.url (one server) or target.urls (replicas), not both",
        ),
        (
            '{urls: ["http://a:1", "ftp://b"], model: m}',
            "s.yaml: target.urls[1]: expected http[s]://host[:port][/base-path]: the scheme "
            "must be http or https",
        ),
        (
            '{urls: ["http://a:1", "http://b:2/?q=1"], model: m}',
            "target.urls[1]: expected http[s]://host[:port][/base-path]: a base URL takes no query",
        ),
        ('{urls: ["mock"], model: m}', "target.urls[0]: the built-in mock is `url: mock`"),
        (
            '{urls: ["http://a:1", "http://b:2", "http://a:1"], model: m}',
            "target.urls: [2] repeats [0] (http://a:1): list each endpoint once",
        ),
        ("{urls: [], model: m}", "target.urls: List should have at least 1 item"),
        ('{urls: ["http://a:1"]}', "target: target.model is required with target.urls"),
        (
            '{url: "http://a:1", model: m, mock: {replicas: 2}}',
            "target: target.mock.replicas needs target.url: mock",
        ),
        (
            f"{{mock: {{replicas: {MAX_MOCK_REPLICAS + 1}}}}}",
            f"target.mock.replicas: Input should be less than or equal to {MAX_MOCK_REPLICAS}",
        ),
        ("{mock: {replicas: 0}}", "target.mock.replicas: Input should be greater than or equal"),
        ("{routing: random}", "target.routing: Input should be 'round_robin', 'least_in_flight'"),
    ],
)
def test_bad_endpoints_are_one_line(text: str, expected: str) -> None:
    assert expected in refused(text)


def test_at_most_max_endpoints() -> None:
    urls = ", ".join(f'"http://h{i}:1"' for i in range(MAX_ENDPOINTS + 1))
    assert f"target.urls: List should have at most {MAX_ENDPOINTS} items" in refused(
        f"{{urls: [{urls}], model: m}}"
    )


def test_the_resolved_scenario_reads_back(tmp_path: Path) -> None:
    """scenario.yaml lists every default: it must not give url beside urls."""
    sc = parse_scenario(
        f'target: {{urls: ["http://u:pw@a:1", "http://b:2"], model: m, routing: session}}\n{REST}',
        "s.yaml",
    )
    data = resolved_scenario(sc)
    assert "url" not in data["target"]
    assert data["target"]["urls"] == ["http://a:1", "http://b:2"]  # no password written
    path = tmp_path / "scenario.yaml"
    write_resolved_scenario(sc, path)
    again = load_scenario(path)
    assert again.target.endpoints == ["http://a:1", "http://b:2"]
    assert again.target.routing == "session"


def test_one_url_resolves_as_before() -> None:
    sc = parse_scenario(f'target: {{url: "http://a:1", model: m}}\n{REST}', "s.yaml")
    t = resolved_scenario(sc)["target"]
    assert t["url"] == "http://a:1" and "urls" not in t


def test_url_on_the_command_line_replaces_the_list(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"target": {"urls": ["http://a:1"], "model": "m"}}) + REST)
    sc = load_scenario(path, flag_overrides({"url": "http://c:3"}))
    assert sc.target.endpoints == ["http://c:3"] and sc.target.urls is None


def test_each_mock_replica_writes_its_own_truth_file() -> None:
    args = ["--itl-ms", "5", "--truth", "out/truth.jsonl", "--seed", "3"]
    assert replica_args(args, 1) == ["--itl-ms", "5", "--truth", "out/truth.1.jsonl", "--seed", "3"]
    assert replica_args(["--truth=t.jsonl"], 0) == ["--truth=t.0.jsonl"]
    assert replica_args(["--itl-ms", "5"], 2) == ["--itl-ms", "5"]
