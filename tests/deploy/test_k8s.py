"""deploy/k8s/, checked without a cluster.

Every manifest validates against the Kubernetes API's own JSON schemas
(``kubernetes-validate``, which bundles them: no network), strictly, so an
unknown or misspelt field fails too; the ServiceMonitor validates against the
pydantic models generated from the Prometheus Operator's CRD
(``cloudcoil-models-prometheus-operator``), with a round trip that catches the
fields those models would ignore. The containers' args parse with loadgen's own
click command and the agent's own parser, the scenario in the ConfigMap loads
with loadgen's scenario loader, and the names that tie the manifests together
(Secret, Service, ports, mount paths) agree. ``kubectl kustomize`` renders both
kustomizations where kubectl is installed (it needs no cluster).
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
import yaml

from loadgen.cli import cli
from loadgen.gpu_agent import build_parser
from loadgen.scenario import load_scenario
from loadgen.scenario.overrides import flag_overrides

kv = pytest.importorskip("kubernetes_validate", reason="needs loadgen[test]: kubernetes-validate")

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
#: the oldest and the newest API versions the bundled schemas cover
VERSIONS = (kv.utils.all_versions()[0], kv.utils.latest_version())
#: manifests no kustomization lists, and why
NOT_IN_A_KUSTOMIZATION = {"results-reader.yaml": "applied by hand to copy results out"}


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")
CORE = [p for p in MANIFESTS if p.parent == K8S]


def _one(name: str) -> dict[str, Any]:
    (doc,) = _docs(K8S / name)
    return doc


def _container(doc: dict[str, Any]) -> dict[str, Any]:
    (c,) = doc["spec"]["template"]["spec"]["containers"]
    return dict(c)


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container["env"]}


def _expand(arg: str, env: dict[str, dict[str, Any]]) -> str:
    """``$(NAME)`` as the kubelet expands it from the container's plain env values."""

    def value(m: re.Match[str]) -> str:
        assert m.group(1) in env and "value" in env[m.group(1)], f"{arg}: no env {m.group(1)}"
        return str(env[m.group(1)]["value"])

    return re.sub(r"\$\((\w+)\)", value, arg)


# -- the Kubernetes API schemas ------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_manifest_validates_against_the_api_schema(path: Path, version: str) -> None:
    docs = _docs(path)
    assert docs and all(d["apiVersion"] != "monitoring.coreos.com/v1" for d in docs)
    for doc in docs:
        assert kv.validate(doc, version, strict=True) == kv.utils.major_minor(version)
        assert doc["metadata"]["namespace" if doc["kind"] != "Namespace" else "name"] == "loadgen"


def test_the_strict_schema_refuses_a_misspelt_field_and_a_wrong_type() -> None:
    """What the test above relies on: strict validation is not a formality."""
    ds = _one("agent-daemonset.yaml")
    typo = copy.deepcopy(ds)
    typo["spec"]["template"]["spec"]["nodeSelecter"] = typo["spec"]["template"]["spec"].pop(
        "nodeSelector"
    )
    with pytest.raises(kv.ValidationError, match="nodeSelecter"):
        kv.validate(typo, VERSIONS[-1], strict=True)
    port = copy.deepcopy(ds)
    _container(port)["ports"][0]["containerPort"] = "9347"
    with pytest.raises(kv.ValidationError):
        kv.validate(port, VERSIONS[-1], strict=True)


def test_every_manifest_is_in_a_kustomization() -> None:
    listed: set[Path] = set()
    for kust in K8S.rglob("kustomization.yaml"):
        k = yaml.safe_load(kust.read_text())
        assert k["kind"] == "Kustomization" and k["namespace"] == "loadgen"
        for res in k["resources"]:
            assert (kust.parent / res).is_file(), f"{kust}: {res} does not exist"
            listed.add((kust.parent / res).resolve())
    unlisted = {p.name for p in MANIFESTS if p.resolve() not in listed}
    assert unlisted == set(NOT_IN_A_KUSTOMIZATION)
    base = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert "monitoring/servicemonitor.yaml" not in base["resources"]  # no CRD needed
    (image,) = base["images"]
    images = {c["image"] for p in CORE for d in _docs(p) for c in _pod(d)}
    assert images == {image["name"]}  # one placeholder, replaced in one place


def _pod(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The containers of a workload or a pod; none for other kinds."""
    spec = doc.get("spec", {})
    return list(spec.get("template", {}).get("spec", spec).get("containers", []))


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("where", ["", "monitoring"])
def test_kustomize_renders_what_validates(where: str) -> None:
    done = subprocess.run(
        ["kubectl", "kustomize", str(K8S / where)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    assert {d["metadata"]["labels"]["app.kubernetes.io/part-of"] for d in docs} == {"loadgen"}
    kinds = sorted(d["kind"] for d in docs)
    if where:
        assert kinds == ["ServiceMonitor"]
        return
    assert kinds == sorted(
        ["ConfigMap", "DaemonSet", "Job", "Namespace", "PersistentVolumeClaim", "Service"]
    )
    for doc in docs:
        kv.validate(doc, VERSIONS[-1], strict=True)
        for c in _pod(doc):
            assert c["image"] == "registry.example.com/loadgen:0.1.0"


# -- the ServiceMonitor against its CRD ----------------------------------------------------


def test_servicemonitor_validates_against_the_crd_models() -> None:
    v1 = pytest.importorskip(
        "cloudcoil.models.prometheus_operator.v1",
        reason="needs loadgen[test]: cloudcoil-models-prometheus-operator",
    )
    sm = _one("monitoring/servicemonitor.yaml")
    model = v1.ServiceMonitor.model_validate(sm)
    # the models ignore unknown fields: a round trip that loses one shows it
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == sm
    typo = copy.deepcopy(sm)
    typo["spec"]["endpoints"][0]["intervall"] = typo["spec"]["endpoints"][0].pop("interval")
    back = v1.ServiceMonitor.model_validate(typo).model_dump(
        by_alias=True, exclude_unset=True, mode="json"
    )
    assert back != typo
    bad = copy.deepcopy(sm)
    bad["spec"]["endpoints"][0]["interval"] = "15 seconds"  # the CRD's duration pattern
    with pytest.raises(ValueError, match="pattern"):
        v1.ServiceMonitor.model_validate(bad)


def test_servicemonitor_selects_the_agent_service_with_its_token() -> None:
    sm = _one("monitoring/servicemonitor.yaml")
    svc = _one("agent-service.yaml")
    ds = _one("agent-daemonset.yaml")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1" and sm["kind"] == "ServiceMonitor"
    labels = svc["metadata"]["labels"]
    assert sm["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == [svc["metadata"]["namespace"]]
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    (volume,) = ds["spec"]["template"]["spec"]["volumes"]
    creds = endpoint["authorization"]["credentials"]
    assert creds["name"] == volume["secret"]["secretName"]
    assert creds["key"] == volume["secret"]["items"][0]["key"]


# -- the commands name real flags ----------------------------------------------------------


def test_agent_args_parse_with_the_agents_parser() -> None:
    ds = _one("agent-daemonset.yaml")
    c = _container(ds)
    assert "command" not in c  # the image's ENTRYPOINT is `loadgen`
    assert c["args"][0] == "agent"
    known = {o for a in build_parser()._actions for o in a.option_strings}
    assert {a for a in c["args"] if a.startswith("--")} <= known
    args = build_parser().parse_args(c["args"][1:])
    assert args.host == "0.0.0.0" and args.token_file and not args.insecure
    (mount,) = c["volumeMounts"]
    (volume,) = ds["spec"]["template"]["spec"]["volumes"]
    assert args.token_file == f"{mount['mountPath']}/{volume['secret']['items'][0]['path']}"
    (port,) = c["ports"]
    assert args.port == port["containerPort"] == 9347
    annotations = ds["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(args.port)
    assert annotations["prometheus.io/path"] == "/metrics"
    assert c["readinessProbe"]["httpGet"]["path"] == "/health"  # the one path without a token
    env = _env(c)
    assert env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all"
    assert "nvidia.com/gpu" not in c["resources"].get("limits", {})  # takes no GPU from vLLM


def _run_context() -> tuple[click.Context, dict[str, Any]]:
    c = _container(_one("loadgen-job.yaml"))
    assert "command" not in c and c["args"][0] == "run"
    env = _env(c)
    argv = [_expand(a, env) for a in c["args"][1:]]
    run = cli.commands["run"]
    known = {o for p in run.params for o in p.opts}
    assert {a for a in argv if a.startswith("--")} <= known
    return run.make_context("run", argv), c


def test_job_args_parse_with_loadgens_run_command() -> None:
    ctx, c = _run_context()
    env = _env(c)
    assert str(ctx.params["scenario"]) == "/scenario/scenario.yaml"
    assert str(ctx.params["out_dir"]) == f"/results/{env['RUN_NAME']['value']}"
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert str(ctx.params["scenario"]).startswith(mounts["scenario"] + "/")
    assert str(ctx.params["out_dir"]).startswith(mounts["results"] + "/")
    workers = int(ctx.params["workers"])
    assert workers + 1 <= int(c["resources"]["requests"]["cpu"])  # the parent has a core
    assert "cpu" not in c["resources"].get("limits", {})
    secret = env["LOADGEN_AGENT_TOKEN"]["valueFrom"]["secretKeyRef"]
    (volume,) = _one("agent-daemonset.yaml")["spec"]["template"]["spec"]["volumes"]
    assert secret == {"name": volume["secret"]["secretName"], "key": "token"}


def test_an_unknown_flag_would_be_caught() -> None:
    with pytest.raises(click.NoSuchOption):
        cli.commands["run"].make_context("run", ["s.yaml", "--worker", "4"])
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--token", "x"])


# -- the scenario ConfigMap ----------------------------------------------------------------


def test_the_scenario_configmap_loads_as_the_job_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cm = _one("scenario-configmap.yaml")
    job = _one("loadgen-job.yaml")
    (volume,) = [v for v in job["spec"]["template"]["spec"]["volumes"] if "configMap" in v]
    assert volume["configMap"]["name"] == cm["metadata"]["name"]
    ctx, c = _run_context()
    (name,) = cm["data"]
    assert Path(str(ctx.params["scenario"])).name == name
    path = tmp_path / name
    path.write_text(cm["data"][name])
    monkeypatch.setenv("LOADGEN_AGENT_TOKEN", "from-the-secret")
    sc = load_scenario(path, flag_overrides(ctx.params), check_inputs=True)
    env = _env(c)
    assert sc.name == env["RUN_NAME"]["value"] == "k8s-vllm"
    assert sc.target.url.rstrip("/") == env["TARGET_URL"]["value"]
    assert str(urlsplit(sc.target.url).hostname).endswith(".svc.cluster.local")
    assert sc.target.model == "auto" and sc.load.workers == 4
    assert sc.telemetry.token_env == "LOADGEN_AGENT_TOKEN" and sc.telemetry.server_metrics
    svc = _one("agent-service.yaml")
    (agent,) = sc.telemetry.agents
    meta = svc["metadata"]
    assert urlsplit(agent).hostname == f"{meta['name']}.{meta['namespace']}.svc.cluster.local"
    assert urlsplit(agent).port == svc["spec"]["ports"][0]["port"]
    monkeypatch.delenv("LOADGEN_AGENT_TOKEN")
    from loadgen.errors import ScenarioError

    with pytest.raises(ScenarioError, match="LOADGEN_AGENT_TOKEN"):  # without the Secret
        load_scenario(path, flag_overrides(ctx.params))
