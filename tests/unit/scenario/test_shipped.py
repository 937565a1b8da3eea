"""Every scenario shipped in scenarios/ is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.scenario import load_scenario

SCENARIOS = sorted((Path(__file__).parents[3] / "scenarios").glob("*.yaml"))


def test_there_are_examples() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {"demo", "chat-sla-vllm", "poisson-rate-sweep", "fp16-vs-int8"} <= names


#: shipped scenarios that name what only their own setting has: a model folder, a key
NEEDS_SETUP = {"chat-sla-vllm", "compose-cpu", "compose-gpu", "exact-prompts-vllm"}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenario_is_valid(path: Path) -> None:
    sc = load_scenario(path, check_inputs=path.stem not in NEEDS_SETUP)
    assert sc.name == path.stem
    assert path.read_text().startswith("# ")  # each is documented in its header


@pytest.mark.parametrize(
    "path", [p for p in SCENARIOS if p.stem in NEEDS_SETUP], ids=lambda p: p.stem
)
def test_what_a_shipped_scenario_needs_is_said_at_load(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loadgen.errors import ScenarioError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LOADGEN_AGENT_TOKEN", raising=False)
    if path.stem == "exact-prompts-vllm" and Path("/models/Llama-3.1-8B-Instruct").exists():
        pytest.skip("this machine has the model folder")
    with pytest.raises(ScenarioError, match=r"environment variable|no such file or folder"):
        load_scenario(path)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_the_resolved_scenario_loads_back(path: Path, tmp_path: Path) -> None:
    """scenario.yaml in a results directory lists every default and must load as it was."""
    from loadgen.results.files import write_resolved_scenario

    sc = load_scenario(path, check_inputs=False)
    out = tmp_path / "scenario.yaml"
    write_resolved_scenario(sc, out)
    again = load_scenario(out, check_inputs=False)
    assert again.load == sc.load and again.workload == sc.workload and again.sla == sc.sla


def test_a_field_of_another_sweep_is_refused_unless_it_is_the_default(tmp_path: Path) -> None:
    from loadgen.errors import ScenarioError

    base = "load: {concurrency: [1, 2], requests_per_step: 2, %s}\n"
    ok = tmp_path / "ok.yaml"
    ok.write_text(base % "max_search_steps: 12")
    assert load_scenario(ok).load.sweep == "list"
    bad = tmp_path / "bad.yaml"
    bad.write_text(base % "max_search_steps: 5")
    with pytest.raises(ScenarioError, match="max_search_steps applies to sweep sla-search only"):
        load_scenario(bad)
