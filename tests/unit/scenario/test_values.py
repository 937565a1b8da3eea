"""Every value of a scenario is checked at load time: encodable, finite, within bounds.

Probe (issue #20): ``target.extra_body`` takes any value, and the YAML loader
builds some that the JSON encoder refuses: an integer past 64 bits, ``!!binary``
(bytes), ``!!set``. The old code took them, and the first request's
``orjson.dumps`` raised mid-run: an ExceptionGroup traceback, exit 1. ``.nan``
and ``.inf`` went out as ``null``; a lone surrogate (``"\\ud800"``) and a number
as a key (``logit_bias: {50256: -100}``) failed like the first. Now each is one
line at load (exit 2) naming the file, the field and what was expected, for
``loadgen run`` and ``loadgen workload`` alike; and a hypothesis test holds
that any extra_body a scenario accepts is one both JSON encoders write.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen.cli import main
from loadgen.errors import ScenarioError
from loadgen.scenario.limits import MAX_BODY_BYTES
from loadgen.scenario.load import MAX_CHARS, parse_scenario

HEAD = "target: {url: 'http://127.0.0.1:9', model: m, extra_body: %s}\n"
LOAD = "load: {concurrency: [1], requests_per_step: 1}\n"

#: extra_body (YAML flow) -> (field, words the line must hold)
REFUSED = {
    "{n: 123456789012345678901234567890}": ("target.extra_body.n", "-2**63 to 2**64-1"),
    "{n: -9223372036854775809}": ("target.extra_body.n", "-2**63 to 2**64-1"),
    "{b: !!binary aGVsbG8=}": ("target.extra_body.b", "!!binary"),
    "{s: !!set {a, b}}": ("target.extra_body.s", "expected a list"),
    "{f: .nan}": ("target.extra_body.f", "expected a finite number"),
    "{o: {f: [1, -.inf]}}": ("target.extra_body.o.f[1]", "expected a finite number"),
    "{logit_bias: {50256: -100}}": ("target.extra_body.logit_bias.50256", "text keys"),
    "{o: {on: 1}}": ("target.extra_body.o.True", "text keys"),
    "{d: 2024-01-01}": ("target.extra_body.d", "quote it: '2024-01-01'"),
    "{t: 2024-01-01 10:00:00}": ("target.extra_body.t", "a timestamp"),
    '{u: "a\\ud800b"}': ("target.extra_body.u", "lone surrogate"),
}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    return int(exc.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize("body", REFUSED)
def test_a_value_json_cannot_carry_is_refused_at_load(
    body: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD % body + LOAD)
    field, words = REFUSED[body]
    for args in (["run", str(path), "--out", str(tmp_path / "out")], ["workload", str(path)]):
        code, err = run_cli(args, capsys)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert err.startswith(f"loadgen: {path}: {field}: ") and words in err, err
    assert not (tmp_path / "out").exists()


def test_a_lone_surrogate_is_refused_in_a_typed_field_too() -> None:
    assert parse_scenario('target: {model: "m\\u00e9", url: mock}\n' + LOAD, "s.yaml")
    with pytest.raises(ScenarioError, match=r"^s.yaml: target.model: "):
        parse_scenario('target: {model: "m\\udc80", url: mock}\n' + LOAD, "s.yaml")


def test_an_extra_body_too_large_to_carry_is_refused() -> None:
    """Aliases repeat a text without its length in the file: 200 x 8 KB is 1.6 MB a request."""
    stop = "[&big '" + "x" * 8000 + "', " + ", ".join(["*big"] * 199) + "]"
    text = HEAD % ("{stop: " + stop + "}") + LOAD
    with pytest.raises(ScenarioError, match=rf"target.extra_body: \d+ bytes .*{MAX_BODY_BYTES}"):
        parse_scenario(text, "s.yaml")


def test_an_alias_bomb_of_characters_is_refused_before_it_is_built() -> None:
    """Few values, but each a long text: 2,000 aliases of 10 KB are 20 M characters."""
    text = "a: &a '" + "x" * 10_000 + "'\nb: [" + ", ".join(["*a"] * 2000) + "]\n"
    with pytest.raises(ScenarioError, match=f"more than {MAX_CHARS} characters"):
        parse_scenario(text, "s.yaml")


def test_json_values_pass_as_they_are() -> None:
    body = (
        "{ignore_eos: true, temperature: 0.5, seed: 18446744073709551615, stop: ['\\u00e9', null],"
        " logit_bias: {'50256': -100}, response_format: {type: json_object}}"
    )
    sc = parse_scenario(HEAD % body + LOAD, "s.yaml")
    assert sc.target.extra_body["seed"] == 2**64 - 1
    assert json.loads(orjson.dumps(sc.target.extra_body)) == sc.target.extra_body


#: what YAML can build, JSON's kinds and others
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.dates(),
    st.datetimes(),
)
_KEYS = st.one_of(st.text(max_size=6), st.integers(-5, 5), st.booleans())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.frozensets(st.integers(0, 3), max_size=3).map(set),
    ),
    max_leaves=12,
)


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=6), _VALUES, max_size=4))
def test_any_extra_body_a_scenario_accepts_is_one_the_encoders_write(body: dict[str, Any]) -> None:
    doc = {"target": {"url": "mock", "extra_body": body}, "load": yaml.safe_load(LOAD)["load"]}
    text = yaml.safe_dump(doc, allow_unicode=False)
    try:
        sc = parse_scenario(text, "s.yaml")
    except ScenarioError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("s.yaml: ")
        return
    extra = sc.target.extra_body
    orjson.dumps(extra)  # what the client does with it
    json.dumps(extra, allow_nan=False)
    assert _finite(extra)
    assert not any(isinstance(v, datetime.date) for v in extra.values())
