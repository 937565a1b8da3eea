"""One vocabulary: each shared constant is defined once, and its users hold that very object."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pydantic
import pytest

import loadgen.summary
import loadgen.summary.run
from loadgen import strict, vocab
from loadgen.metrics import bigstats, profiles, stats
from loadgen.scenario import PercentileBounds, SlaSpec, dists, loadspec, target_spec, workload_spec
from loadgen.scenario import models as scenario_models
from loadgen.summary import Distribution, Intervals, LatencyBounds, SlaBounds

PKG = Path(vocab.__file__).parent


def test_percentiles_are_vocab_s_own() -> None:
    assert loadgen.summary.PERCENTILES is vocab.PERCENTILES
    assert stats.PERCENTILES is vocab.PERCENTILES
    assert bigstats.PERCENTILES is vocab.PERCENTILES
    assert stats.PERCENTILE_OF is vocab.PERCENTILE_OF
    assert bigstats.PERCENTILE_OF is vocab.PERCENTILE_OF


def test_profile_names_are_vocab_s_own() -> None:
    assert profiles.PROFILE_NAMES is vocab.PROFILE_NAMES
    assert loadgen.summary.run.PROFILE_NAMES is vocab.PROFILE_NAMES  # what Summary accepts
    assert tuple(profiles.PROFILES) == vocab.PROFILE_NAMES
    assert all(p.name == name for name, p in profiles.PROFILES.items())


def test_the_summary_takes_only_a_known_profile() -> None:
    fields = {
        "loadgen_version": "0",
        "name": "n",
        "run_id": "r",
        "target_url": "http://x",
        "api": "tgi",
        "model": "m",
        "clock_anchor": {"monotonic_ns": 0, "wall_ns": 0},
    }
    for name in vocab.PROFILE_NAMES:
        assert loadgen.summary.Summary(**fields, metrics_profile=name).metrics_profile == name
    with pytest.raises(pydantic.ValidationError, match="expected one of loadgen, vllm, aiperf"):
        loadgen.summary.Summary(**fields, metrics_profile="locust")


def test_distribution_fields_are_the_stat_keys() -> None:
    assert tuple(f for f in Distribution.model_fields if f != "ci") == vocab.DISTRIBUTION_STATS
    assert tuple(Intervals.model_fields) == ("confidence", "mean", *vocab.PERCENTILE_OF)


def test_the_summary_s_sla_block_has_the_scenario_s_keys() -> None:
    assert list(SlaBounds.model_fields) == list(SlaSpec.model_fields)
    assert list(LatencyBounds.model_fields) == list(PercentileBounds.model_fields)


def test_one_strict_base() -> None:
    """Every scenario model is a strict.Spec, every summary model a strict.Strict, and no
    module of the package spells out the config again."""
    for module in (dists, loadspec, scenario_models, target_spec, workload_spec):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, pydantic.BaseModel) and cls.__module__ == module.__name__:
                assert issubclass(cls, strict.Spec), cls
    for name in loadgen.summary.__all__:
        obj = getattr(loadgen.summary, name)
        if isinstance(obj, type):
            assert issubclass(obj, strict.Strict), name
    config = re.compile(r"ConfigDict\(extra=")
    spelled = [
        str(f.relative_to(PKG))
        for f in sorted(PKG.rglob("*.py"))
        if f.name != "strict.py" and config.search(f.read_text())
    ]
    assert spelled == []


def test_a_confidence_is_written_as_set() -> None:
    assert [vocab.confidence_text(c) for c in (0.95, 0.9, 0.975, 0.999, 0.5)] == [
        "95%", "90%", "97.5%", "99.9%", "50%"
    ]  # fmt: skip
