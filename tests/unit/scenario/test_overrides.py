"""Command-line flags -> scenario fields: a mode switch drops what the new mode's model lacks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.errors import ScenarioError
from loadgen.scenario.load import DROP, load_scenario
from loadgen.scenario.loadspec import ConcurrencyLoad, OfflineLoad, RateLoad, TraceLoad
from loadgen.scenario.overrides import flag_overrides

RATE = {
    "target": {"url": "http://127.0.0.1:9", "model": "m"},
    "load": {
        "mode": "rate",
        "rate": [1, 2],
        "arrival": "gamma",
        "burstiness": 0.5,
        "max_concurrency": 8,
        "requests_per_step": 10,
    },
}


def write(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_concurrency_drops_every_field_of_the_other_modes_and_keeps_the_shared_ones(
    tmp_path: Path,
) -> None:
    out = flag_overrides({"concurrency": "1,4"})["--concurrency"]
    dropped = {path[1] for path, value in out.items() if value is DROP}
    every = {n for m in (ConcurrencyLoad, RateLoad, TraceLoad, OfflineLoad) for n in m.model_fields}
    assert dropped == every - set(ConcurrencyLoad.model_fields)
    assert {"rate", "arrival", "burstiness", "trace"} <= dropped
    assert "requests_per_step" not in dropped and "warmup_requests" not in dropped
    sc = load_scenario(write(tmp_path, RATE), flag_overrides({"concurrency": "1,4"}))
    assert isinstance(sc.load, ConcurrencyLoad)
    assert sc.load.points == [1, 4] and sc.load.requests_per_step == 10


def test_rate_from_a_concurrency_scenario(tmp_path: Path) -> None:
    doc = {**RATE, "load": {"mode": "concurrency", "concurrency": [2], "requests_per_step": 5}}
    sc = load_scenario(write(tmp_path, doc), flag_overrides({"rate": "3", "requests": 7}))
    assert isinstance(sc.load, RateLoad)
    assert sc.load.points == [3.0] and sc.load.requests_per_step == 7


def test_plain_flags_set_their_field_and_a_url_replaces_the_list() -> None:
    out = flag_overrides({"url": "http://h:1", "workers": "auto", "usd_per_hour": 2.5})
    assert out["--url"] == {("target", "url"): "http://h:1", ("target", "urls"): DROP}
    assert out["--workers"] == {("load", "workers"): "auto"}
    assert out["--usd-per-hour"] == {("cost", "usd_per_hour"): 2.5}
    assert flag_overrides({"url": None, "model": None}) == {}


def test_both_sweep_flags_are_refused_in_one_line() -> None:
    with pytest.raises(ScenarioError, match="only one of --concurrency and --rate"):
        flag_overrides({"concurrency": "1", "rate": "2"})


def test_a_bad_flag_value_is_blamed_on_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"--concurrency"):
        load_scenario(write(tmp_path, RATE), flag_overrides({"concurrency": "1,x"}))
