"""What a step's planned requests hold in memory, near enough for a bound.

An open-loop step makes its requests before it starts (so sending them costs
nothing), a closed loop keeps a few ahead of demand: both must fit. Text is
counted at :data:`BYTES_PER_TOKEN`, images and audio at what their encoding
takes in base64 (how a request holds them, :class:`loadgen.workload.media.Media`).
"""

from __future__ import annotations

import math

from loadgen.scenario.dists import (
    Distribution,
    EmpiricalDist,
    ExponentialSeconds,
    FixedDist,
    FixedSeconds,
    FloatDistribution,
    LognormalDist,
    LognormalSeconds,
    NormalDist,
    UniformDist,
    UniformSeconds,
)
from loadgen.scenario.media_spec import (
    MAX_AUDIO_S,
    MAX_IMAGE_SIDE,
    MAX_IMAGES,
    AudioSpec,
    ImagesSpec,
)

__all__ = [
    "BYTES_PER_TOKEN",
    "MAX_PLANNED_BYTES",
    "mean_length",
    "mean_seconds",
    "media_bytes",
]

#: what a prompt token's text takes in memory (a word and its space, as a str)
BYTES_PER_TOKEN = 5
#: a step may plan this much up front: 500 M tokens of text, or their bytes in images
MAX_PLANNED_BYTES = 500_000_000 * BYTES_PER_TOKEN
#: encoded bytes a synthetic image takes a pixel (measured: noisy PNG ~2.4, JPEG ~0.3),
#: rounded up, times 4/3 for base64
_PER_PIXEL = {"png": 3.0 * 4 / 3, "jpeg": 0.4 * 4 / 3}


def mean_length(d: Distribution) -> float:
    """The mean of a length distribution (a lengths file counts 1: it is read when planned)."""
    if isinstance(d, FixedDist):
        return float(d.value)
    if isinstance(d, UniformDist):
        return (d.min + d.max) / 2
    if isinstance(d, NormalDist):
        return d.mean if d.max is None else min(d.mean, d.max)
    if isinstance(d, LognormalDist):
        mu, sigma = d.log_params()
        mean = math.exp(mu + sigma * sigma / 2)
        return mean if d.max is None else min(mean, d.max)
    if isinstance(d, EmpiricalDist):
        if d.values:
            return sum(d.values) / len(d.values)
        if d.histogram is not None:
            h = d.histogram
            mids = [(a + b) / 2 for a, b in zip(h.edges, h.edges[1:], strict=False)]
            return sum(m * c for m, c in zip(mids, h.counts, strict=True)) / sum(h.counts)
    return 1.0


def mean_seconds(d: FloatDistribution) -> float:
    """The mean of a seconds distribution."""
    if isinstance(d, FixedSeconds):
        return d.value
    if isinstance(d, UniformSeconds):
        return (d.min + d.max) / 2
    if isinstance(d, ExponentialSeconds):
        return d.mean
    assert isinstance(d, LognormalSeconds)
    mu, sigma = d.log_params()
    mean = math.exp(mu + sigma * sigma / 2)
    return max(d.min, mean if d.max is None else min(mean, d.max))


def media_bytes(images: ImagesSpec | None, audio: AudioSpec | None) -> float:
    """The mean bytes one request's synthetic images and audio take (base64-encoded)."""
    total = 0.0
    if images is not None:
        count = min(MAX_IMAGES, mean_length(images.count))
        side_w = min(MAX_IMAGE_SIDE, mean_length(images.width))
        side_h = min(MAX_IMAGE_SIDE, mean_length(images.height))
        total += count * side_w * side_h * _PER_PIXEL[images.format]
    if audio is not None:
        seconds = min(MAX_AUDIO_S, max(0.1, mean_seconds(audio.seconds)))
        total += seconds * audio.sample_rate * 2 * 4 / 3  # mono 16-bit PCM
    return total
