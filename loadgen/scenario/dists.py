"""Length and time distributions, and the dataset spec, as scenario models.

Token counts (``Distribution``): fixed | uniform | normal | lognormal |
empirical, integers >= 1 once drawn. Seconds (``FloatDistribution``, think
times): fixed | uniform | exponential | lognormal, floats >= 0. The same
``dist`` tags name both families; the classes differ. ``DatasetSpec`` says how
to read and sample a local prompt file.

Models only: drawing lives in ``loadgen.workload.lengths`` and reading files
in ``loadgen.workload.datasets``. Nothing here does I/O (an empirical
``file`` is read when the workload is planned).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from loadgen.scenario.limits import MAX_LIST, MAX_REQUESTS, MAX_SECONDS, MAX_TOKENS
from loadgen.strict import Spec

__all__ = [
    "DIST_TAGS",
    "DatasetSpec",
    "Distribution",
    "EmpiricalDist",
    "ExponentialSeconds",
    "FixedDist",
    "FixedSeconds",
    "FloatDistribution",
    "Histogram",
    "LognormalDist",
    "LognormalSeconds",
    "NormalDist",
    "UniformDist",
    "UniformSeconds",
    "lognormal_params",
]

#: Every ``dist`` tag of both unions (discriminator values, not user-visible keys).
DIST_TAGS = frozenset({"fixed", "uniform", "normal", "lognormal", "empirical", "exponential"})


def lognormal_params(mean: float, std: float) -> tuple[float, float]:
    """(mu, sigma) of the log of a lognormal whose own mean and std are given.

    sigma² = ln(1 + std²/mean²), mu = ln(mean) - sigma²/2 (exact, not an estimate).
    """
    var_log = math.log1p((std / mean) ** 2)
    return math.log(mean) - var_log / 2, math.sqrt(var_log)


def _check_bounds(low: float, high: float | None) -> None:
    if high is not None and high < low:
        raise ValueError(f"max ({high:g}) must be >= min ({low:g})")


# --- token counts -------------------------------------------------------------------------

#: The clamp of a drawn token count (normal, lognormal): the lower end, and the upper
#: (None: none). A draw beyond is moved to the end, not drawn again.
_TokenFloor = Annotated[
    int,
    Field(
        ge=1, le=MAX_TOKENS, description="Draws below are raised to this (clamped, not redrawn)."
    ),
]
_TokenCeiling = Annotated[
    int | None,
    Field(
        ge=1, le=MAX_TOKENS, description="Draws above are lowered to this (None: no upper bound)."
    ),
]


class FixedDist(Spec):
    dist: Literal["fixed"] = Field(description="Every request gets `value`.")
    value: int = Field(ge=1, le=MAX_TOKENS, description="The token count.")


class UniformDist(Spec):
    dist: Literal["uniform"] = Field(description="Integers drawn uniformly in [min, max].")
    min: int = Field(ge=1, le=MAX_TOKENS, description="Smallest token count.")
    max: int = Field(ge=1, le=MAX_TOKENS, description="Largest token count.")

    @model_validator(mode="after")
    def _ordered(self) -> UniformDist:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) must be >= min ({self.min})")
        return self


class NormalDist(Spec):
    dist: Literal["normal"] = Field(
        description="Normal draws, rounded to integers and clamped to [min, max]."
    )
    mean: float = Field(
        gt=0, le=MAX_TOKENS, description="Mean token count before rounding and clamping."
    )
    std: float = Field(
        ge=0, le=MAX_TOKENS, description="Standard deviation before rounding and clamping."
    )
    min: _TokenFloor = 1
    max: _TokenCeiling = None

    @model_validator(mode="after")
    def _bounds(self) -> NormalDist:
        _check_bounds(self.min, self.max)
        return self


class _LognormalParams(Spec):
    """Either ``mean`` + ``std`` of the values themselves or ``mu`` + ``sigma`` of their log."""

    mean: float | None = Field(
        None, gt=0, le=MAX_TOKENS, description="Mean of the values (with `std`)."
    )
    std: float | None = Field(
        None, ge=0, le=MAX_TOKENS, description="Standard deviation of the values (with `mean`)."
    )
    mu: float | None = Field(
        None,
        ge=-20,
        le=20,
        description="Mean of the log of the values (with `sigma`, instead of mean).",
    )
    sigma: float | None = Field(
        None, ge=0, le=10, description="Standard deviation of the log (with `mu`, instead of std)."
    )

    @model_validator(mode="after")
    def _one_parametrisation(self) -> Self:
        """One pair or the other, whole (runs before a subclass's own checks)."""
        moments = self.mean is not None or self.std is not None
        logs = self.mu is not None or self.sigma is not None
        if moments and logs:
            raise ValueError("give `mean` and `std`, or `mu` and `sigma`, not both")
        if moments and (self.mean is None or self.std is None):
            raise ValueError("give both `mean` and `std`")
        if logs and (self.mu is None or self.sigma is None):
            raise ValueError("give both `mu` and `sigma`")
        if not moments and not logs:
            raise ValueError(
                "give `mean` and `std` (of the values) or `mu` and `sigma` (of the log)"
            )
        return self

    def log_params(self) -> tuple[float, float]:
        """(mu, sigma) of the underlying normal, converted from mean/std when given so."""
        if self.mu is not None and self.sigma is not None:
            return self.mu, self.sigma
        return lognormal_params(self.mean or 0.0, self.std or 0.0)


class LognormalDist(_LognormalParams):
    dist: Literal["lognormal"] = Field(
        description="Lognormal draws, rounded to integers and clamped to [min, max]."
    )
    min: _TokenFloor = 1
    max: _TokenCeiling = None

    @model_validator(mode="after")
    def _bounds(self) -> LognormalDist:
        _check_bounds(self.min, self.max)
        return self


class Histogram(Spec):
    edges: list[Annotated[int, Field(ge=0, le=MAX_TOKENS + 1)]] = Field(
        min_length=2,
        max_length=MAX_LIST,
        description="Bin edges e0 < e1 < ... < ek; bin i holds [e_i, e_{i+1}).",
    )
    counts: list[Annotated[float, Field(ge=0)]] = Field(
        description="k weights, one per bin (need not be integers); their sum must be > 0."
    )

    @model_validator(mode="after")
    def _shape(self) -> Histogram:
        if self.edges[0] < 1:
            raise ValueError(f"edges must start at 1 or above (token counts), got {self.edges[0]}")
        for i, (lo, hi) in enumerate(zip(self.edges, self.edges[1:], strict=False)):
            if hi <= lo:
                raise ValueError(f"edges must increase: edges[{i + 1}] = {hi} <= {lo}")
        if len(self.counts) != len(self.edges) - 1:
            k = len(self.edges) - 1
            msg = f"{k + 1} edges need {k} counts, got {len(self.counts)}"
            raise ValueError(msg)
        if sum(self.counts) <= 0:
            raise ValueError("counts must not all be 0")
        return self


class EmpiricalDist(Spec):
    dist: Literal["empirical"] = Field(
        description="Observed lengths: exactly one of `values`, `histogram` or `file`."
    )
    values: list[Annotated[int, Field(ge=1, le=MAX_TOKENS)]] | None = Field(
        None, min_length=1, description="Token counts drawn uniformly, with replacement."
    )
    histogram: Histogram | None = Field(
        None, description="A bin by its count, then an integer uniformly within the bin."
    )
    file: str | None = Field(
        None,
        min_length=1,
        description="Text file of token counts (one per line, `#` comments) or a JSON list, "
        "drawn as `values`; read when the workload is planned.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> EmpiricalDist:
        given = [n for n in ("values", "histogram", "file") if getattr(self, n) is not None]
        if len(given) != 1:
            got = " and ".join(given) or "none"
            raise ValueError(f"give exactly one of `values`, `histogram` and `file` (got {got})")
        return self


Distribution = Annotated[
    FixedDist | UniformDist | NormalDist | LognormalDist | EmpiricalDist,
    Field(discriminator="dist"),
]


# --- seconds ------------------------------------------------------------------------------


class FixedSeconds(Spec):
    dist: Literal["fixed"] = Field(description="Always `value` seconds.")
    value: float = Field(ge=0, le=MAX_SECONDS, description="The time in seconds.")


class UniformSeconds(Spec):
    dist: Literal["uniform"] = Field(description="Seconds drawn uniformly in [min, max].")
    min: float = Field(ge=0, le=MAX_SECONDS, description="Shortest time in seconds.")
    max: float = Field(ge=0, le=MAX_SECONDS, description="Longest time in seconds.")

    @model_validator(mode="after")
    def _bounds(self) -> UniformSeconds:
        _check_bounds(self.min, self.max)
        return self


class ExponentialSeconds(Spec):
    dist: Literal["exponential"] = Field(description="Exponential draws (memoryless waits).")
    mean: float = Field(gt=0, le=MAX_SECONDS, description="Mean time in seconds.")


class LognormalSeconds(_LognormalParams):
    dist: Literal["lognormal"] = Field(description="Lognormal draws clamped to [min, max].")
    min: float = Field(
        0.0, ge=0, le=MAX_SECONDS, description="Draws below are raised to this many seconds."
    )
    max: float | None = Field(
        None,
        ge=0,
        le=MAX_SECONDS,
        description="Draws above are lowered to this many seconds (None: no bound).",
    )

    @model_validator(mode="after")
    def _bounds(self) -> LognormalSeconds:
        _check_bounds(self.min, self.max)
        return self


FloatDistribution = Annotated[
    FixedSeconds | UniformSeconds | ExponentialSeconds | LognormalSeconds,
    Field(discriminator="dist"),
]


# --- datasets -----------------------------------------------------------------------------


class DatasetSpec(Spec):
    path: str = Field(min_length=1, description="The dataset file (JSONL or ShareGPT JSON).")
    format: Literal["auto", "jsonl", "sharegpt"] = Field(
        "auto",
        description="auto: ShareGPT when the first row has `conversations`, else JSONL rows "
        "of `prompt` or `messages`; jsonl; sharegpt.",
    )
    sharegpt_turns: Literal["first", "all"] = Field(
        "first",
        description="ShareGPT: first = the first human turn is the prompt; all = every turn up "
        "to the last human turn, as chat messages. The next gpt turn is the answer.",
    )
    min_prompt_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Leave out rows whose prompt is shorter (in counted tokens).",
    )
    max_prompt_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Leave out rows whose prompt is longer (in counted tokens).",
    )
    max_output_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Leave out rows whose output length (as `output_tokens` picks it) is longer.",
    )
    output_tokens: Literal["auto", "dataset", "answer", "distribution"] = Field(
        "auto",
        description="max_tokens of each request: dataset = the row's `output_tokens` (rows "
        "without one are left out); answer = the counted length of the row's reference answer "
        "(rows without one are left out); distribution = drawn from workload.output_tokens; "
        "auto = the row's `output_tokens`, else its answer's length, else drawn.",
    )
    sample: Literal["random", "sequential"] = Field(
        "random",
        description="random: a seeded shuffle, every row once before any repeats; "
        "sequential: rows in file order, starting over at the end.",
    )
    replace: bool = Field(
        False, description="sample random: draw with replacement (rows may repeat at once)."
    )
    limit: int | None = Field(
        None,
        ge=1,
        le=MAX_REQUESTS,
        description="Keep only the first N rows left after the filters.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> DatasetSpec:
        low, high = self.min_prompt_tokens, self.max_prompt_tokens
        if low is not None and high is not None and high < low:
            raise ValueError(f"max_prompt_tokens ({high}) must be >= min_prompt_tokens ({low})")
        if self.max_output_tokens is not None and self.output_tokens == "distribution":
            raise ValueError("max_output_tokens filters rows by output_tokens dataset or answer")
        if self.replace and self.sample == "sequential":
            raise ValueError("replace applies to sample random only")
        return self
