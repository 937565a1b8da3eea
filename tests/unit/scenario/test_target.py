"""target.url and target.model as the scenario checks them, and what the mock is told."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from loadgen.scenario.target_spec import MOCK_MODEL, TargetSpec
from loadgen.target.mock import mock_args


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "https://api.example.com",
        "http://gateway:8080/llm",  # a base path: loadgen appends /v1/... to it
        "http://[::1]:8000/",
        "mock",
    ],
)
def test_base_urls_are_kept_as_written(url: str) -> None:
    assert TargetSpec(url=url, model="m").url == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("localhost:8000", "the scheme must be http or https"),
        ("ftp://host", "the scheme must be http or https"),
        ("127.0.0.1", "the scheme must be http or https"),
        ("http://", "no host"),
        ("http://host:99999", "the port is not a number"),
        ("http://host:80/v1/?x=1", "no query (?) or fragment (#)"),
        ("http://host/#top", "no query (?) or fragment (#)"),
        ("http://host/?", "no query (?) or fragment (#)"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, why: str) -> None:
    with pytest.raises(ValidationError) as exc:
        TargetSpec(url=url, model="m")
    assert why in str(exc.value)


def test_model_is_required_for_a_real_server() -> None:
    needed = r"target\.model is required unless target\.url is mock"
    with pytest.raises(ValidationError, match=needed):
        TargetSpec(url="http://127.0.0.1:8000")


def test_the_mock_needs_no_model_and_auto_is_a_model() -> None:
    assert TargetSpec().model == MOCK_MODEL
    assert TargetSpec(url="mock").model == MOCK_MODEL
    assert TargetSpec(url="http://h:1", model="auto").model == "auto"


def test_the_mock_is_told_the_scenarios_model() -> None:
    """So that /v1/models lists it and the pre-flight check has nothing to warn about."""
    assert mock_args(TargetSpec(model="demo-model"))[-2:] == ["--model", "demo-model"]
    with_profile = mock_args(TargetSpec(model="x", mock={"profile": "tiny-cpu"}))
    assert with_profile == ["--profile", "tiny-cpu", "--model", "x"]
    # the scenario's own --model wins; auto takes whatever the mock lists
    assert mock_args(TargetSpec(model="x", mock={"args": ["--model=y"]})) == ["--model=y"]
    assert mock_args(TargetSpec(model="auto")) == []
