"""What a pooling api (embeddings, rerank) allows: e2e bounds yes, token-timing bounds no
(one line, exit 2); pooling workload fields only with their api; stream ignored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadgen.cli import main
from loadgen.scenario.models import Scenario
from loadgen.workload.source import Workload

BASE = """
name: t
target: {{url: mock, api: {api}, model: m}}
workload:
  prompt_tokens: {{dist: fixed, value: 8}}
{workload}
load: {{mode: concurrency, concurrency: [1], requests_per_step: 4}}
sla: {sla}
"""


def _write(tmp_path: Path, api: str, workload: str = "", sla: str = "{}") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(api=api, workload=workload, sla=sla))
    return path


@pytest.mark.parametrize(
    ("api", "workload", "sla", "expected"),
    [
        (
            "openai-embeddings",
            "",
            "{ttft_ms: {p99: 100}}",
            "sla.ttft_ms: target.api openai-embeddings",
        ),
        ("rerank", "", "{itl_ms: {p50: 5}}", "sla.itl_ms: target.api rerank answers with one JSON"),
        ("openai-embeddings", "", "{tpot_ms: {p90: 5}}", "bound sla.e2e_ms instead"),
        (
            "openai-chat",
            "  batch: {dist: fixed, value: 4}",
            "{}",
            "workload.batch needs target.api openai-embeddings, not openai-chat",
        ),
        (
            "openai-embeddings",
            "  documents: {dist: fixed, value: 4}",
            "{}",
            "workload.documents needs target.api rerank",
        ),
        (
            "rerank",
            "  prefix: {tokens: 4}",
            "{}",
            "workload.prefix: target.api rerank sends synthetic inputs",
        ),
    ],
)
def test_refused_in_one_line_exit_2(
    api: str,
    workload: str,
    sla: str,
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write(tmp_path, api, workload, sla)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2
    assert len(err) == 1 and str(path) in err[0] and expected in err[0], err
    assert "Traceback" not in err[0]
    assert not (tmp_path / "out").exists()


def test_e2e_bounds_and_stream_true_are_fine() -> None:
    sc = Scenario.model_validate(
        {
            "target": {"api": "openai-embeddings", "stream": True},
            "workload": {"batch": {"dist": "fixed", "value": 3}},
            "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 2},
            "sla": {"e2e_ms": {"p90": 100}},
        }
    )
    assert sc.target.stream is True and sc.target.streams is False
    chat = Scenario.model_validate(
        {"load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 2}}
    )
    assert chat.target.streams is True


def _specs(api: str, workload: dict[str, object], n: int = 8) -> list:  # type: ignore[type-arg]
    sc = Scenario.model_validate(
        {
            "target": {"api": api},
            "workload": {"seed": 3, **workload},
            "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 2},
        }
    )
    w = Workload.prepare(sc.workload, chat=False, api=api)
    return w.requests(np.random.default_rng([3, 0, 0]), n)


def test_embeddings_requests_carry_a_seeded_batch() -> None:
    wl = {
        "batch": {"dist": "uniform", "min": 2, "max": 6},
        "prompt_tokens": {"dist": "uniform", "min": 4, "max": 9},
    }
    specs = _specs("openai-embeddings", wl)
    assert all(2 <= len(s.inputs) <= 6 for s in specs)
    assert len({len(s.inputs) for s in specs}) > 1  # drawn, not fixed
    for s in specs:
        assert s.inputs[0] == s.prompt
        assert s.prompt_tokens == sum(len(t.split()) for t in s.inputs)  # every input counted
        assert all(4 <= len(t.split()) <= 9 for t in s.inputs)
    assert [s.inputs for s in _specs("openai-embeddings", wl)] == [s.inputs for s in specs]


def test_rerank_requests_carry_a_query_and_documents() -> None:
    wl = {"documents": {"dist": "fixed", "value": 5}, "query_tokens": {"dist": "fixed", "value": 3}}
    specs = _specs("rerank", {**wl, "prompt_tokens": {"dist": "fixed", "value": 7}})
    for s in specs:
        assert isinstance(s.prompt, str) and len(s.prompt.split()) == 3
        assert len(s.inputs) == 5 and all(len(d.split()) == 7 for d in s.inputs)
        assert s.prompt_tokens == 5 * 3 + 5 * 7  # a cross-encoder reads the query per document


def test_defaults_one_input_and_eight_documents() -> None:
    assert {len(s.inputs) for s in _specs("openai-embeddings", {})} == {1}
    assert {len(s.inputs) for s in _specs("rerank", {})} == {8}
    assert {len(s.inputs) for s in _specs("openai-chat", {})} == {0}
