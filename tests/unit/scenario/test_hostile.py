"""Hostile and careless scenario files: one line on stderr and exit 2, never a traceback.

The hypothesis test feeds parse_scenario random documents and mutations of a
valid one: each is a Scenario or one ScenarioError line, nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen.cli import main
from loadgen.errors import ScenarioError
from loadgen.scenario.load import load_scenario, parse_scenario
from loadgen.scenario.models import Scenario

GOOD = """
name: t
target: {url: "http://127.0.0.1:9", api: openai-chat, model: m, timeouts_s: {total: 60}}
workload:
  prompt_tokens: {dist: fixed, value: 8}
  output_tokens: {dist: uniform, min: 2, max: 4}
load: {mode: rate, rate: [1, 2], requests_per_step: 4}
telemetry: {server_metrics: "http://127.0.0.1:9/metrics"}
"""


def _bomb() -> str:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(8):
        prev, cur = chr(97 + i), chr(98 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return GOOD + "\n".join(lines).replace("a: &a", "x_a: &a") + "\n"


HOSTILE: dict[str, tuple[str | bytes, str]] = {
    "not utf-8": (b"name: \xff\xfe\x00\n", "not UTF-8 text"),
    "deep nesting": ("load: " + "[" * 3000 + "]" * 3000 + "\n", "nested deeper than 50 levels"),
    "alias bomb": (_bomb(), "aliases expanded"),
    "duplicate key": (GOOD + "name: u\n", "name: duplicate key"),
    "inf timeout": (GOOD.replace("total: 60", "total: .inf"), "finite number"),
    "huge timeout": (GOOD.replace("total: 60", "total: 1.0e+300"), "less than or equal to"),
    "inf rate": (GOOD.replace("rate: [1, 2]", "rate: [.inf]"), "load.rate[0]"),
    "tiny rate": (GOOD.replace("rate: [1, 2]", "rate: [1.0e-300]"), "load.rate[0]"),
    "huge duration": (
        GOOD.replace("requests_per_step: 4", "duration_s: 1.0e+300"),
        "load.duration_s",
    ),
    "10^12 requests": (
        GOOD.replace("requests_per_step: 4", "requests_per_step: 1000000000000"),
        "load.requests_per_step",
    ),
    "5e6 streams": (
        GOOD.replace("mode: rate, rate: [1, 2]", "concurrency: [5000000]"),
        "load.concurrency[0]",
    ),
    "10^9-token prompt": (GOOD.replace("value: 8", "value: 1000000000"), "prompt_tokens.value"),
    "10^30 vocab": (
        GOOD.replace("workload:\n", "workload:\n  vocab_size: 1" + "0" * 30 + "\n"),
        "workload.vocab_size",
    ),
    "name climbs out": (GOOD.replace("name: t", "name: ../../x"), "name: letters"),
    "absolute name": (GOOD.replace("name: t", "name: /tmp/x"), "name: letters"),
    "empty url": (GOOD.replace('"http://127.0.0.1:9"', "''"), "target.url"),
    "file url": (GOOD.replace('"http://127.0.0.1:9"', "file:///etc/passwd"), "target.url"),
    "broken ipv6 url": (GOOD.replace('"http://127.0.0.1:9"', "'http://[::1'"), "target.url"),
    "header injection": (
        GOOD.replace("model: m,", 'model: m, headers: {X-A: "v\\r\\nX-B: w"},'),
        "target.headers",
    ),
    "metrics url scheme": (
        GOOD.replace('"http://127.0.0.1:9/metrics"', "ftp://h/metrics"),
        "telemetry.server_metrics",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = HOSTILE[case]
    path = tmp_path / "s.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert expected in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_good_file_is_valid_and_merge_keys_still_work() -> None:
    assert isinstance(parse_scenario(GOOD, "s.yaml"), Scenario)
    text = GOOD.replace(
        "load: {mode: rate, rate: [1, 2], requests_per_step: 4}",
        "load:\n  <<: {mode: rate, rate: [5], requests_per_step: 4}\n  rate: [1, 2]",
    )
    assert parse_scenario(text, "s.yaml").load.points == [1.0, 2.0]


# --- generated documents --------------------------------------------------------

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "mock", "http://[::1", "file:///etc/passwd", "../x", "1e300", "\x00"]),
    st.text(max_size=8),
)
_TREES = st.recursive(
    _LEAVES,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    ["name", "target", "workload", "load", "sla", "telemetry", "cost", "url", "rate", "value"]
)


def _leaf_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaf_paths(v, (*prefix, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaf_paths(v, (*prefix, i))]
    return [prefix]


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _one_line_or_scenario(text: str) -> None:
    try:
        parsed = parse_scenario(text, "gen.yaml")
    except ScenarioError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("gen.yaml")
    else:
        assert isinstance(parsed, Scenario)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(top=st.dictionaries(_KEYS, _TREES, max_size=4))
def test_random_documents_never_raise_anything_else(top: dict[str, Any]) -> None:
    _one_line_or_scenario(yaml.safe_dump(top, allow_unicode=True))


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_mutated_good_scenario_never_raises_anything_else(data: st.DataObject) -> None:
    doc = yaml.safe_load(GOOD)
    paths = _leaf_paths(doc)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        _set(doc, data.draw(st.sampled_from(paths)), data.draw(_TREES))
    _one_line_or_scenario(yaml.safe_dump(doc, allow_unicode=True))


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(
    cut=st.integers(min_value=0, max_value=len(GOOD)),
    junk=st.text(alphabet="{}[]:,&*!|>-'\"\n #%@`\t", max_size=6),
)
def test_damaged_yaml_text_never_raises_anything_else(cut: int, junk: str) -> None:
    _one_line_or_scenario(GOOD[:cut] + junk + GOOD[cut:])


def test_an_open_loop_step_too_big_to_plan_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ten million 512-token prompts would be planned up front: refused before anything runs."""
    path = tmp_path / "big.yaml"
    path.write_text(
        "target: {url: mock}\n"
        "workload: {prompt_tokens: {dist: fixed, value: 512}}\n"
        "load: {mode: rate, rate: [100], requests_per_step: 10000000}\n"
    )
    with pytest.raises(SystemExit) as info:
        main(["workload", str(path)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1
    assert "plans its requests up front" in err
    path.write_text(path.read_text().replace("10000000", "100000"))
    assert load_scenario(path).load.requests_per_step == 100000


def test_an_open_loop_step_of_images_too_large_to_plan_is_refused(tmp_path: Path) -> None:
    """The bound counts images' bytes beside prompt text: 20,000 requests of a 16 MP PNG
    (~64 MB each in base64) are ~1.3 TB, refused naming the 2.5 GB bound; 20 pass."""
    path = tmp_path / "big.yaml"
    path.write_text(
        "target: {url: mock}\n"
        "workload: {images: {width: {dist: fixed, value: 4000}, "
        "height: {dist: fixed, value: 4000}}}\n"
        "load: {mode: rate, rate: [10], requests_per_step: 20000}\n"
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    text = str(info.value)
    assert "\n" not in text and "plans its requests up front" in text
    assert "MB of images and audio each is more than 2.5 GB" in text
    path.write_text(path.read_text().replace("20000", "20"))
    assert load_scenario(path).load.requests_per_step == 20
