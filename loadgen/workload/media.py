"""Images and audio a request carries: made here (seeded), or read from a dataset's files.

A :class:`Media` is encoded once, when the workload is built (base64, as the
APIs' ``data:`` URLs and ``input_audio`` parts take it), never at send time.

Synthetic images are a gradient of two random colours plus per-pixel noise,
so that they compress as photographs do (a flat colour would shrink to
nothing, pure noise would not shrink at all). Synthetic audio is a mono
16-bit PCM WAV of a few tones plus noise. Both are seeded per request
(:func:`media_rng`), so a rerun sends the same bytes and no two requests of
a step send the same image (a server's multimodal cache must not hit).
"""

from __future__ import annotations

import base64
import io
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario import MAX_AUDIO_S, MAX_IMAGE_SIDE, MAX_IMAGES, AudioSpec, ImagesSpec

__all__ = [
    "Media",
    "MediaMaker",
    "image_file",
    "media_rng",
    "synthetic_image",
    "synthetic_wav",
]

#: the random stream of a request's media: (seed, MEDIA_STREAM, step draw, index)
MEDIA_STREAM = 4_000_037
_NOISE = 48  # the noise's span in levels of 255: photographs' PNG sizes, not a flat colour's
_MIME = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "webp": "image/webp"}


@dataclass(slots=True, frozen=True)
class Media:
    """One image or audio clip, encoded.

    ``kind`` is ``image`` or ``audio``; ``mime`` its type (``image/png``,
    ``audio/wav``); ``b64`` the file's bytes in base64; ``width``/``height`` the
    image's pixels (0 for audio); ``seconds`` the clip's length (0 for an
    image); ``nbytes`` the file's size before base64.
    """

    kind: str
    mime: str
    b64: str
    width: int = 0
    height: int = 0
    seconds: float = 0.0
    nbytes: int = 0

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.b64}"

    def raw(self) -> bytes:
        """The file's bytes (decoded again: for a multipart upload)."""
        return base64.b64decode(self.b64)


def _encoded(
    kind: str, mime: str, data: bytes, width: int = 0, height: int = 0, seconds: float = 0.0
) -> Media:
    b64 = base64.b64encode(data).decode("ascii")
    return Media(kind, mime, b64, width, height, seconds, len(data))


def media_rng(seed: int, draw: int, index: int) -> np.random.Generator:
    """The generator of one request's media: ``draw`` comes from the step's stream."""
    return np.random.default_rng([seed, MEDIA_STREAM, draw, index])


def synthetic_image(rng: np.random.Generator, width: int, height: int, fmt: str) -> Media:
    """A ``width`` x ``height`` RGB image (gradient plus noise) encoded as ``fmt``."""
    from PIL import Image

    a, b = rng.integers(0, 256 - _NOISE, size=(2, 3)).astype(np.float32)
    # a + (b - a) * (across + down): one outer sum of two ramps (not a float per pixel)
    across = np.linspace(0.0, 0.5, width, dtype=np.float32)[:, None]
    down = np.linspace(0.0, 0.5, height, dtype=np.float32)[:, None]
    x = np.rint(a + (b - a) * across).astype(np.int16)
    y = np.rint((b - a) * down).astype(np.int16)
    base = np.add(x[None, :, :], y[:, None, :])
    np.clip(base, 0, 255 - _NOISE, out=base)
    noise = np.frombuffer(rng.bytes(height * width * 3), dtype=np.uint8).astype(np.uint16)
    noise *= _NOISE
    noise >>= 8  # uniform in [0, _NOISE): a byte scaled, 2.5x faster than rng.integers
    noise += base.reshape(-1).astype(np.uint16)
    pixels = noise.astype(np.uint8).reshape(height, width, 3)
    out = io.BytesIO()
    image = Image.fromarray(pixels, "RGB")
    if fmt == "jpeg":
        image.save(out, format="JPEG", quality=85)
    else:
        image.save(out, format="PNG", compress_level=1)
    return _encoded("image", _MIME[fmt], out.getvalue(), width=width, height=height)


def synthetic_wav(rng: np.random.Generator, seconds: float, sample_rate: int) -> Media:
    """A mono 16-bit PCM WAV of ``seconds``: three random tones plus noise."""
    n = max(1, round(seconds * sample_rate))
    t = np.arange(n, dtype=np.float64) / sample_rate
    freqs = rng.uniform(110.0, 2000.0, size=3)
    signal = sum(np.sin(2 * np.pi * f * t) for f in freqs) / 4
    signal = signal + rng.normal(0.0, 0.05, size=n)
    pcm = (np.clip(signal, -1.0, 1.0) * 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return _encoded("audio", "audio/wav", out.getvalue(), seconds=n / sample_rate)


def image_file(path: Path, where: str) -> Media:
    """The image at ``path`` as it is (its bytes are sent unchanged); ``where`` names the
    dataset row in errors (ScenarioError: missing, unreadable, not an image)."""
    from PIL import Image, UnidentifiedImageError

    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{where}: images: cannot read {path}: {exc.strerror or exc}"
        raise ScenarioError(msg) from None
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            fmt = (image.format or "").lower()
    except (UnidentifiedImageError, OSError):
        raise ScenarioError(f"{where}: images: {path} is not an image Pillow can read") from None
    mime = _MIME.get(fmt, f"image/{fmt or 'png'}")
    return _encoded("image", mime, data, width=width, height=height)


class MediaMaker:
    """Each request's synthetic media, drawn from the scenario's ``images``/``audio``."""

    def __init__(self, seed: int, images: ImagesSpec | None, audio: AudioSpec | None) -> None:
        self.seed = seed
        self.images = images
        self.audio = audio

    def make(self, rng: np.random.Generator, indices: list[int]) -> list[tuple[Media, ...]]:
        """The media of the requests numbered ``indices`` (one draw from ``rng``, the step's)."""
        draw = self.draw(rng)
        return [self.made(draw, index) for index in indices]

    @staticmethod
    def draw(rng: np.random.Generator) -> int:
        """The one number a batch of requests takes from the step's stream for its media."""
        return int(rng.integers(0, 2**62))

    def made(self, draw: int, index: int) -> tuple[Media, ...]:
        """Request ``index``'s media: a pure function of (seed, ``draw``, ``index``), so it
        may be made anywhere (a helper process, ahead of the send) and still be the same."""
        from loadgen.workload.lengths import sample_lengths, sample_seconds

        r = media_rng(self.seed, draw, index)
        media: list[Media] = []
        if (spec := self.images) is not None:
            count = min(MAX_IMAGES, sample_lengths(spec.count, 1, r)[0])
            widths = sample_lengths(spec.width, count, r)
            heights = sample_lengths(spec.height, count, r)
            for w, h in zip(widths, heights, strict=True):
                w, h = min(w, MAX_IMAGE_SIDE), min(h, MAX_IMAGE_SIDE)
                media.append(synthetic_image(r, w, h, spec.format))
        if (a := self.audio) is not None:
            seconds = min(MAX_AUDIO_S, max(0.1, sample_seconds(a.seconds, 1, r)[0]))
            media.append(synthetic_wav(r, seconds, a.sample_rate))
        return tuple(media)
