"""Token-count and seconds distributions: the draws match their parameters.

Large samples at fixed seeds: each tolerance is several standard errors wide
(so it cannot flake) yet narrower than the error a wrong formula would make
(the lognormal mean/std conversion above all).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from loadgen.errors import ScenarioError
from loadgen.scenario.dists import (
    Distribution,
    FloatDistribution,
    LognormalDist,
    lognormal_params,
)
from loadgen.workload.lengths import describe, read_lengths_file, sample_lengths, sample_seconds

TOKENS: TypeAdapter[Any] = TypeAdapter(Distribution)
SECONDS: TypeAdapter[Any] = TypeAdapter(FloatDistribution)
N = 200_000


def tokens(**fields: Any) -> Any:
    return TOKENS.validate_python(fields)


def seconds(**fields: Any) -> Any:
    return SECONDS.validate_python(fields)


def draw(spec: Any, n: int = N, seed: int = 7) -> np.ndarray:
    return np.asarray(sample_lengths(spec, n, np.random.default_rng(seed)))


# --- models -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"dist": "lognormal", "mean": 5, "std": 1, "mu": 1, "sigma": 1}, "not both"),
        ({"dist": "lognormal", "mean": 5}, "give both `mean` and `std`"),
        ({"dist": "lognormal", "sigma": 1}, "give both `mu` and `sigma`"),
        ({"dist": "lognormal"}, "give `mean` and `std` (of the values)"),
        ({"dist": "normal", "mean": 5, "std": 1, "min": 10, "max": 9}, "max (9) must be >= min"),
        ({"dist": "normal", "mean": 0, "std": 1}, "greater than 0"),
        ({"dist": "normal", "mean": 5, "std": 1, "min": 0}, "greater than or equal to 1"),
        ({"dist": "uniform", "min": 5, "max": 4}, "max (4) must be >= min (5)"),
        ({"dist": "empirical"}, "exactly one of `values`, `histogram` and `file` (got none)"),
        ({"dist": "empirical", "values": [1], "file": "x"}, "(got values and file)"),
        ({"dist": "empirical", "values": []}, "at least 1 item"),
        ({"dist": "empirical", "values": [3, 0]}, "greater than or equal to 1"),
        (
            {"dist": "empirical", "histogram": {"edges": [1, 10, 10], "counts": [1, 1]}},
            "edges must increase: edges[2] = 10 <= 10",
        ),
        (
            {"dist": "empirical", "histogram": {"edges": [1, 10, 20], "counts": [1]}},
            "3 edges need 2 counts, got 1",
        ),
        (
            {"dist": "empirical", "histogram": {"edges": [1, 10], "counts": [0]}},
            "counts must not all be 0",
        ),
        (
            {"dist": "empirical", "histogram": {"edges": [1, 10], "counts": [-1]}},
            "greater than or equal to 0",
        ),
        (
            {"dist": "empirical", "histogram": {"edges": [0, 10], "counts": [1]}},
            "edges must start at 1",
        ),
        ({"dist": "fixed", "value": 3, "extra": 1}, "Extra inputs are not permitted"),
        ({"dist": "exponential", "mean": 1}, "does not match any of the expected tags"),
    ],
)
def test_bad_token_distributions_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as err:
        tokens(**fields)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"dist": "exponential", "mean": 0}, "greater than 0"),
        ({"dist": "fixed", "value": -1}, "greater than or equal to 0"),
        ({"dist": "uniform", "min": 2, "max": 1}, "max (1) must be >= min (2)"),
        ({"dist": "lognormal", "mean": 2, "std": 1, "mu": 0}, "not both"),
        ({"dist": "empirical", "values": [1]}, "does not match any of the expected tags"),
    ],
)
def test_bad_seconds_distributions_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as err:
        seconds(**fields)
    assert message in str(err.value)


def test_lognormal_conversion_is_exact() -> None:
    mu, sigma = lognormal_params(512.0, 256.0)
    assert sigma == pytest.approx(math.sqrt(math.log(1.25)), rel=1e-12)
    assert mu == pytest.approx(math.log(512.0) - math.log(1.25) / 2, rel=1e-12)
    # and back: the lognormal's own mean and variance
    assert math.exp(mu + sigma**2 / 2) == pytest.approx(512.0, rel=1e-12)
    assert (math.exp(sigma**2) - 1) * math.exp(2 * mu + sigma**2) == pytest.approx(256.0**2)
    given = LognormalDist(dist="lognormal", mu=1.5, sigma=0.25)
    assert given.log_params() == (1.5, 0.25)


# --- token counts -------------------------------------------------------------------------


def test_fixed_draws_nothing() -> None:
    rng = np.random.default_rng(1)
    assert sample_lengths(tokens(dist="fixed", value=42), 5, rng) == [42] * 5
    assert rng.integers(0, 10**9) == np.random.default_rng(1).integers(0, 10**9)


def test_uniform_keeps_the_old_draws_and_covers_both_ends() -> None:
    spec = tokens(dist="uniform", min=10, max=20)
    got = sample_lengths(spec, 1000, np.random.default_rng(3))
    want = np.random.default_rng(3).integers(10, 21, size=1000).tolist()
    assert got == want  # same values as before the rewrite: a rerun sends the same requests
    values = draw(spec)
    assert set(values.tolist()) == set(range(10, 21))
    counts = np.bincount(values)[10:]
    assert counts.min() / counts.max() > 0.95  # each of the 11 values ~1/11 of 200k


def test_normal_mean_std_and_percentiles() -> None:
    values = draw(tokens(dist="normal", mean=500, std=100))
    assert values.mean() == pytest.approx(500, abs=2)  # standard error 0.22
    assert values.std() == pytest.approx(100, rel=0.02)
    p16, p50, p84 = np.percentile(values, [15.8655, 50, 84.1345])
    assert (p16, p50, p84) == (pytest.approx(400, abs=2), 500, pytest.approx(600, abs=2))
    assert values.dtype.kind == "i"


def test_normal_is_clamped_not_redrawn() -> None:
    spec = tokens(dist="normal", mean=100, std=100, min=50, max=150)
    values = draw(spec)
    assert values.min() == 50 and values.max() == 150
    # P(rint(x) < 50) = P(x < 49.5) = Phi(-0.505) = 0.3068: all of that mass sits on 50
    expected = 0.5 * math.erfc(0.505 / math.sqrt(2))
    assert np.mean(values == 50) == pytest.approx(expected, abs=0.005)
    assert np.mean(values == 150) == pytest.approx(0.5 * math.erfc(0.505 / math.sqrt(2)), abs=0.005)


def test_normal_lower_clamp_defaults_to_one() -> None:
    values = draw(tokens(dist="normal", mean=2, std=5), n=10_000)
    assert values.min() == 1
    assert np.mean(values == 1) > 0.3


def test_lognormal_from_mean_and_std_has_that_mean_and_std() -> None:
    values = draw(tokens(dist="lognormal", mean=512, std=256))
    # a wrong conversion misses these: mu = ln(mean) gives a mean of 572;
    # sigma = std/mean gives a std of 273
    assert values.mean() == pytest.approx(512, rel=0.01)  # standard error 0.11%
    assert values.std() == pytest.approx(256, rel=0.03)  # standard error ~0.3%
    mu, sigma = lognormal_params(512, 256)
    assert np.median(values) == pytest.approx(math.exp(mu), rel=0.01)
    p95 = math.exp(mu + 1.6449 * sigma)
    assert np.percentile(values, 95) == pytest.approx(p95, rel=0.015)


def test_lognormal_from_mu_and_sigma() -> None:
    values = draw(tokens(dist="lognormal", mu=5.0, sigma=0.6))
    assert np.median(values) == pytest.approx(math.exp(5.0), rel=0.01)
    logs = np.log(values)
    assert logs.std() == pytest.approx(0.6, rel=0.02)
    assert values.mean() == pytest.approx(math.exp(5.0 + 0.18), rel=0.01)


def test_lognormal_clamps() -> None:
    values = draw(tokens(dist="lognormal", mean=512, std=512, min=200, max=1000))
    assert values.min() == 200 and values.max() == 1000
    mu, sigma = lognormal_params(512, 512)
    above = 0.5 * math.erfc((math.log(1000.5) - mu) / sigma / math.sqrt(2))
    assert np.mean(values == 1000) == pytest.approx(above, abs=0.005)


def test_empirical_values_are_drawn_uniformly_with_replacement() -> None:
    values = draw(tokens(dist="empirical", values=[7, 7, 30, 900]))
    assert set(values.tolist()) == {7, 30, 900}
    assert np.mean(values == 7) == pytest.approx(0.5, abs=0.005)
    assert np.mean(values == 900) == pytest.approx(0.25, abs=0.005)


def test_empirical_histogram_bins_by_weight_then_uniform_within() -> None:
    hist = {"edges": [1, 10, 100, 1000, 5000], "counts": [1, 2, 0, 1]}
    values = draw(tokens(dist="empirical", histogram=hist))
    bins = np.digitize(values, hist["edges"]) - 1
    freq = np.bincount(bins, minlength=4) / len(values)
    assert freq == pytest.approx([0.25, 0.5, 0.0, 0.25], abs=0.005)
    assert values.min() == 1 and values.max() == 4999  # [e_i, e_{i+1}): the top edge is out
    first = values[bins == 0]
    assert set(first.tolist()) == set(range(1, 10))
    assert np.bincount(first)[1:].min() > 0.9 * len(first) / 9


def test_histogram_weights_need_not_be_integers() -> None:
    hist = {"edges": [1, 2, 3], "counts": [0.1, 0.3]}
    values = draw(tokens(dist="empirical", histogram=hist), n=100_000)
    assert np.mean(values == 2) == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize(
    "fields",
    [
        {"dist": "uniform", "min": 1, "max": 1000},
        {"dist": "normal", "mean": 100, "std": 30, "max": 150},
        {"dist": "lognormal", "mean": 512, "std": 256},
        {"dist": "empirical", "values": [1, 2, 3, 5, 8]},
        {"dist": "empirical", "histogram": {"edges": [1, 5, 50], "counts": [3, 1]}},
    ],
)
def test_same_seed_same_values_other_seed_other_values(fields: dict[str, Any]) -> None:
    spec = tokens(**fields)
    a = sample_lengths(spec, 500, np.random.default_rng([4, 0, 0]))
    b = sample_lengths(spec, 500, np.random.default_rng([4, 0, 0]))
    c = sample_lengths(spec, 500, np.random.default_rng([5, 0, 0]))
    assert a == b and repr(a) == repr(b)
    assert a != c
    assert all(type(v) is int and v >= 1 for v in a)


def test_zero_draws() -> None:
    for fields in ({"dist": "lognormal", "mu": 1, "sigma": 1}, {"dist": "fixed", "value": 2}):
        assert sample_lengths(tokens(**fields), 0, np.random.default_rng(0)) == []


# --- empirical files ----------------------------------------------------------------------


def test_lengths_file_with_comments_and_blank_lines(tmp_path: Path) -> None:
    f = tmp_path / "lengths.txt"
    f.write_text("# observed prompt lengths\n120\n\n  75  # a short one\n3000\n")
    assert read_lengths_file(f) == (120, 75, 3000)
    spec = tokens(dist="empirical", file=str(f))
    values = draw(spec, n=30_000)
    assert set(values.tolist()) == {120, 75, 3000}
    assert np.mean(values == 75) == pytest.approx(1 / 3, abs=0.02)


def test_lengths_file_as_json_list_and_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "l.json").write_text("[4, 5,\n 6]\n")
    spec = tokens(dist="empirical", file="l.json")
    got = sample_lengths(spec, 300, np.random.default_rng(0), base_dir=tmp_path)
    assert set(got) == {4, 5, 6}


def test_lengths_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    f = tmp_path / "l.txt"
    f.write_text("5\n")
    assert read_lengths_file(f) == (5,)
    f.write_text("6\n7\n")
    assert read_lengths_file(f) == (6, 7)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("12\n\n# c\nx\n", ":4: expected a positive integer, got 'x'"),
        ("12\n0\n", ":2: expected a positive integer, got '0'"),
        ("12\n-3\n", ":2: expected a positive integer, got '-3'"),
        ("1.5\n", ":1: expected a positive integer, got '1.5'"),
        ("12 13\n", ":1: expected a positive integer, got '12 13'"),
        ('[1,\n 2,\n "x"]', ":3: expected a positive integer, got 'x'"),
        ("[1,\n 2.5]", ":2: expected a positive integer, got 2.5"),
        ("[1,\n true]", ":2: expected a positive integer, got True"),
        ("[1,\n 2", ":2: not valid JSON: expected ',' or ']' after an item"),
        ("# nothing\n\n", ": no lengths (expected positive integers, one a line)"),
        ("[]", ": no lengths (expected positive integers, one a line)"),
    ],
)
def test_lengths_file_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "l.txt"
    f.write_text(text)
    with pytest.raises(ScenarioError) as err:
        sample_lengths(tokens(dist="empirical", file=str(f)), 3, np.random.default_rng(0))
    assert str(err.value) == f"{f}{message}"
    assert "\n" not in str(err.value)


def test_missing_and_undecodable_lengths_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"nope\.txt: cannot read the lengths file: No such"):
        read_lengths_file(tmp_path / "nope.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"12\n\xff\xfe\n")
    with pytest.raises(ScenarioError, match=r"bad\.txt:2: not UTF-8 text \(byte 0xff\)"):
        read_lengths_file(bad)


# --- seconds ------------------------------------------------------------------------------


def draw_s(spec: Any, n: int = N, seed: int = 7) -> np.ndarray:
    return np.asarray(sample_seconds(spec, n, np.random.default_rng(seed)))


def test_fixed_and_uniform_seconds() -> None:
    assert sample_seconds(seconds(dist="fixed", value=2), 3, np.random.default_rng(0)) == [2.0] * 3
    values = draw_s(seconds(dist="uniform", min=0.5, max=2.5))
    assert values.min() >= 0.5 and values.max() < 2.5
    assert values.mean() == pytest.approx(1.5, abs=0.01)
    assert np.percentile(values, 25) == pytest.approx(1.0, abs=0.01)


def test_exponential_seconds() -> None:
    values = draw_s(seconds(dist="exponential", mean=2.0))
    assert values.mean() == pytest.approx(2.0, rel=0.01)
    assert values.std() == pytest.approx(2.0, rel=0.015)
    assert np.median(values) == pytest.approx(2.0 * math.log(2), rel=0.015)
    assert values.min() >= 0


def test_lognormal_seconds_mean_std_and_clamps() -> None:
    values = draw_s(seconds(dist="lognormal", mean=3.0, std=1.5))
    assert values.mean() == pytest.approx(3.0, rel=0.01)
    assert values.std() == pytest.approx(1.5, rel=0.03)
    clamped = draw_s(seconds(dist="lognormal", mean=3.0, std=1.5, min=1.0, max=4.0))
    assert clamped.min() == 1.0 and clamped.max() == 4.0
    mu, sigma = lognormal_params(3.0, 1.5)
    above = 0.5 * math.erfc((math.log(4.0) - mu) / sigma / math.sqrt(2))
    assert np.mean(clamped == 4.0) == pytest.approx(above, abs=0.005)
    assert clamped.dtype == np.float64


def test_seconds_are_seeded() -> None:
    spec = seconds(dist="exponential", mean=1.0)
    a = sample_seconds(spec, 100, np.random.default_rng(0))
    assert a == sample_seconds(spec, 100, np.random.default_rng(0))
    assert a != sample_seconds(spec, 100, np.random.default_rng(1))
    assert all(type(v) is float for v in a)


# --- describe -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        (tokens(dist="fixed", value=128), "fixed 128"),
        (tokens(dist="uniform", min=64, max=512), "uniform [64, 512]"),
        (
            tokens(dist="normal", mean=512, std=128.5, max=4096),
            "normal mean 512 std 128.5 [1, 4096]",
        ),
        (
            tokens(dist="lognormal", mean=512, std=256, max=4096),
            "lognormal mean 512 std 256 [1, 4096]",
        ),
        (tokens(dist="lognormal", mu=6.1267, sigma=0.47), "lognormal mu 6.127 sigma 0.47 [1, inf)"),
        (tokens(dist="empirical", values=[30, 5, 900]), "empirical 3 values in [5, 900]"),
        (
            tokens(dist="empirical", histogram={"edges": [1, 10, 100], "counts": [1, 1]}),
            "empirical histogram of 2 bins in [1, 100)",
        ),
        (tokens(dist="empirical", file="lens.txt"), "empirical values from lens.txt"),
        (seconds(dist="fixed", value=2), "fixed 2 s"),
        (seconds(dist="uniform", min=0.5, max=2), "uniform [0.5, 2] s"),
        (seconds(dist="exponential", mean=1.5), "exponential mean 1.5 s"),
        (seconds(dist="lognormal", mean=2, std=1, max=30), "lognormal mean 2 std 1 [0, 30] s"),
    ],
)
def test_describe(spec: Any, text: str) -> None:
    assert describe(spec) == text
