"""workload.cancel refused when it is wrong: one line naming the field, exit 2, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.cli import main
from loadgen.results.files import resolved_scenario
from loadgen.scenario import load_scenario

LOAD = "load: {mode: concurrency, concurrency: [1], requests_per_step: 2}\n"
TOKENS = "after_tokens: {dist: fixed, value: 4}"

BAD = {
    "both points": (
        f"workload: {{cancel: {{share: 0.1, {TOKENS}, after_s: {{dist: fixed, value: 1}}}}}}\n",
        "workload.cancel: give exactly one of `after_tokens` and `after_s`",
    ),
    "no point": (
        "workload: {cancel: {share: 0.1}}\n",
        "workload.cancel: give exactly one of `after_tokens` and `after_s`",
    ),
    "share 0": (
        f"workload: {{cancel: {{share: 0, {TOKENS}}}}}\n",
        "workload.cancel.share: Input should be greater than 0 (got 0)",
    ),
    "share above 1": (
        f"workload: {{cancel: {{share: 1.5, {TOKENS}}}}}\n",
        "workload.cancel.share: Input should be less than or equal to 1 (got 1.5)",
    ),
    "no share": (f"workload: {{cancel: {{{TOKENS}}}}}\n", "workload.cancel.share"),
    "zero tokens": (
        "workload: {cancel: {share: 0.5, after_tokens: {dist: fixed, value: 0}}}\n",
        "workload.cancel.after_tokens.value",
    ),
    "negative seconds": (
        "workload: {cancel: {share: 0.5, after_s: {dist: fixed, value: -1}}}\n",
        "workload.cancel.after_s.value",
    ),
    "misspelt": (
        "workload: {cancel: {share: 0.5, after_token: {dist: fixed, value: 3}}}\n",
        "workload.cancel.after_token: unknown field; did you mean after_tokens?",
    ),
    "pooling": (
        f"target: {{api: openai-embeddings}}\nworkload: {{cancel: {{share: 0.5, {TOKENS}}}}}\n",
        "workload.cancel: target.api openai-embeddings answers with one JSON body, there is "
        "no stream to stop; drop workload.cancel",
    ),
    "rerank": (
        f"target: {{api: rerank}}\nworkload: {{cancel: {{share: 0.5, {TOKENS}}}}}\n",
        "workload.cancel: target.api rerank answers with one JSON body",
    ),
    "not streamed": (
        f"target: {{stream: false}}\nworkload: {{cancel: {{share: 0.5, {TOKENS}}}}}\n",
        "workload.cancel: target.stream is false: the answer comes in one body",
    ),
    "agent": (
        f"workload: {{cancel: {{share: 0.5, {TOKENS}}}, agent: {{calls: {{dist: fixed, value: 2}}, "
        "tool_result_tokens: {dist: fixed, value: 8}}}\n",
        "workload.cancel: not with workload.agent",
    ),
    "no lengths file": (
        "workload: {cancel: {share: 0.5, after_tokens: {dist: empirical, file: none.txt}}}\n",
        "workload.cancel.after_tokens.file",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_cancel_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = BAD[case]
    path = tmp_path / "s.yaml"
    path.write_text(text + LOAD)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and expected in lines[0], lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_cancel_reads_back_from_the_resolved_scenario(tmp_path: Path) -> None:
    (tmp_path / "points.txt").write_text("3\n5\n8\n")
    path = tmp_path / "s.yaml"
    path.write_text(
        "workload: {cancel: {share: 0.2, after_tokens: {dist: empirical, file: points.txt}}}\n"
        + LOAD
    )
    sc = load_scenario(path)
    cancel = sc.workload.cancel
    assert cancel is not None and cancel.share == 0.2 and cancel.after_s is None
    # the relative lengths file is taken from the scenario's folder
    assert getattr(cancel.after_tokens, "file", None) == str(tmp_path / "points.txt")
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(resolved_scenario(sc)))
    assert load_scenario(again).workload.cancel == cancel
