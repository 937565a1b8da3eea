"""deploy/ (Prometheus, Grafana) and the compose monitoring profile, checked without Docker.

Every query of the Grafana dashboard names only metrics that really exist:
loadgen's from the exporter's table, the agent's from its exposition code,
vLLM's from the names pinned against a real vLLM server
(tests/integration/vllm/test_vllm_raw.py) and those loadgen's telemetry reads.
Where Debian's ``promtool`` is installed, every query is parsed as PromQL and
the Prometheus configuration is checked by Prometheus's own tool.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from loadgen.cli import cli
from loadgen.gpu_agent.exposition import GPU_METRICS, HOST_METRICS
from loadgen.gpu_agent.exposition import PREFIX as AGENT_PREFIX
from loadgen.prom_endpoint import exposed_names
from loadgen.scenario.listen import parse_listen
from loadgen.telemetry.server_metrics import SERVER_METRICS

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "deploy" / "grafana" / "loadgen.json"
PROM_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
PROMTOOL = shutil.which("promtool")
#: Grafana's own variables, as Prometheus would see them after Grafana fills them in
GRAFANA_VARS = {"$__rate_interval": "1m", "$__interval": "15s"}


def vllm_names() -> set[str]:
    """vLLM's /metrics names pinned against a real server, and those loadgen's telemetry reads."""
    src = (ROOT / "tests" / "integration" / "vllm" / "test_vllm_raw.py").read_text()
    pinned: tuple[str, ...] = ()
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "METRIC_NAMES":
            pinned = ast.literal_eval(node.value)
    assert pinned, "METRIC_NAMES is gone from test_vllm_raw.py"
    names = {n for n in pinned} | {n for ns in SERVER_METRICS.values() for n in ns}
    names = {n for n in names if n.startswith("vllm:")}
    histograms = {n for n in names if n.endswith("_seconds")}
    return names | {f"{h}_{s}" for h in histograms for s in ("bucket", "sum", "count")}


def agent_names() -> set[str]:
    names = {AGENT_PREFIX + m[0] for m in (*GPU_METRICS, *HOST_METRICS)}
    return names | {f"{AGENT_PREFIX}{s}_total" for s in ("sampling_ticks", "sampling_overruns")}


KNOWN = {"loadgen": exposed_names(), "vllm": vllm_names(), "agent": agent_names()}
_KEYWORDS = {"by", "without", "or", "and", "unless", "on", "ignoring", "offset", "bool", "le"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (label matchers, ranges, groupings cut)."""
    for var, value in GRAFANA_VARS.items():
        expr = expr.replace(var, value)
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", expr)
    idents = re.findall(r"(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*+(?!\s*\()", expr)
    return {i for i in idents if i not in _KEYWORDS and not re.fullmatch(r"[0-9.e+-]+", i)}


def test_the_name_reader_sees_what_a_query_reads() -> None:
    q = "histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket"
    q += '{a="b"}[$__rate_interval])))'
    assert metric_names(q) == {"vllm:time_to_first_token_seconds_bucket"}
    assert metric_names("avg(x_total or y)") == {"x_total", "y"}


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return doc


def queries(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (p["title"], t["expr"])
        for p in dashboard["panels"]
        if p["type"] != "row"
        for t in p["targets"]
    ]


def test_the_dashboard_takes_its_prometheus_as_a_variable(dashboard: dict[str, Any]) -> None:
    (var,) = [v for v in dashboard["templating"]["list"] if v["name"] == "datasource"]
    assert var["type"] == "datasource" and var["query"] == "prometheus"
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 15 and len({p["id"] for p in dashboard["panels"]}) == len(
        dashboard["panels"]
    )
    for p in panels:
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p["targets"] and all(t["datasource"] == p["datasource"] for t in p["targets"])
        assert len({t["refId"] for t in p["targets"]}) == len(p["targets"])


def test_every_query_reads_metrics_that_exist(dashboard: dict[str, Any]) -> None:
    every = set().union(*KNOWN.values())
    used: dict[str, set[str]] = {source: set() for source in KNOWN}
    for title, expr in queries(dashboard):
        names = metric_names(expr)
        assert names, (title, expr)
        assert names <= every, f"{title}: {sorted(names - every)} exposed by nobody"
        for source, known in KNOWN.items():
            used[source] |= names & known
    # the client's view beside the server's and the GPUs'
    assert {
        *(
            "loadgen_ttft_seconds_bucket",
            "loadgen_itl_seconds_bucket",
            "loadgen_e2e_seconds_bucket",
        ),
        *("loadgen_requests_total", "loadgen_output_tokens_total", "loadgen_in_flight_requests"),
        "loadgen_load_point",
    } <= used["loadgen"]
    assert {
        "vllm:num_requests_running",
        "vllm:kv_cache_usage_perc",
        "vllm:gpu_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket",
    } <= used["vllm"]
    assert {"loadgen_agent_gpu_utilization_percent", "loadgen_agent_gpu_power_watts"} <= used[
        "agent"
    ]
    quantiles = [e for _, e in queries(dashboard) if "histogram_quantile" in e]
    assert quantiles and all("_bucket[" in e and "by (le)" in e for e in quantiles)


@pytest.mark.skipif(PROMTOOL is None, reason="no promtool (Debian's prometheus package)")
def test_every_query_is_promql_and_the_config_passes_promtool(
    dashboard: dict[str, Any], tmp_path: Path
) -> None:
    assert PROMTOOL is not None
    rules = []
    for i, (_, expr) in enumerate(queries(dashboard)):
        for var, value in GRAFANA_VARS.items():
            expr = expr.replace(var, value)
        rules.append({"record": f"dashboard:query_{i}", "expr": expr})
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    token = tmp_path / "token"
    token.write_text("t")
    config = PROM_CONFIG.read_text().replace("/prometheus/token", str(token))
    (tmp_path / "prometheus.yml").write_text(config)
    done = subprocess.run(
        [PROMTOOL, "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"])


def run_flags(command: list[str]) -> dict[str, Any]:
    """``loadgen run`` parses the service's command; its parameters."""
    run = cli.commands["run"]
    assert isinstance(run, click.Command)
    ctx = run.make_context("run", list(command[1:]))
    return dict(ctx.params)


def test_prometheus_scrapes_the_runners_agents_and_servers(
    services: dict[str, dict[str, Any]],
) -> None:
    jobs = {j["job_name"]: j for j in yaml.safe_load(PROM_CONFIG.read_text())["scrape_configs"]}
    assert set(jobs) == {"loadgen", "vllm", "agent"}
    targets = {name: set(j["static_configs"][0]["targets"]) for name, j in jobs.items()}
    for runner in ("runner", "runner-cpu"):
        svc = services[runner]
        flags = run_flags(svc["command"])
        host, port = parse_listen(flags["serve_metrics"])
        assert host == "0.0.0.0" and f"{runner}:{port}" in targets["loadgen"]
        assert flags["serve_metrics_token_env"] in svc["environment"]  # the token it requires
        assert flags["serve_metrics_linger"] >= 2 * 5  # two scrape intervals
    for agent in ("agent", "agent-cpu"):
        assert f"{agent}:9347" in targets["agent"] and "9347" in services[agent]["command"]
    assert {"vllm:8000", "mock:8000"} == targets["vllm"]
    for name in ("loadgen", "agent"):  # both require the bearer token
        assert jobs[name]["authorization"]["type"] == "Bearer"
    prom = services["prometheus"]
    assert "LOADGEN_AGENT_TOKEN" in prom["environment"]
    assert "/prometheus/token" in prom["command"][0]


def test_grafana_is_provisioned_with_the_datasource_and_the_dashboard(
    services: dict[str, dict[str, Any]],
) -> None:
    assert services["prometheus"]["profiles"] == services["grafana"]["profiles"] == ["monitoring"]
    mounts = {}
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            src, dst = volume.split(":")[:2]
            assert (ROOT / src).exists(), volume
            mounts[dst] = ROOT / src
    provisioning = mounts["/etc/grafana/provisioning"]
    (ds,) = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())[
        "datasources"
    ]
    assert ds["type"] == "prometheus" and ds["url"] == "http://prometheus:9090" and ds["isDefault"]
    assert "127.0.0.1:9090:9090" in services["prometheus"]["ports"]
    (provider,) = yaml.safe_load((provisioning / "dashboards" / "loadgen.yml").read_text())[
        "providers"
    ]
    folder = provider["options"]["path"]
    assert mounts[f"{folder}/loadgen.json"] == DASHBOARD
    assert all(p.startswith("127.0.0.1:") for p in services["grafana"]["ports"])
