"""Synthetic images and audio are seeded, sized and encoded as asked; dataset images are
read relative to the dataset, and a missing one is one line naming the row and the path."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from loadgen.errors import ScenarioError
from loadgen.scenario import load_scenario
from loadgen.scenario.media_spec import AudioSpec, ImagesSpec
from loadgen.workload import Workload
from loadgen.workload.deal import deal
from loadgen.workload.media import Media, MediaMaker, synthetic_image, synthetic_wav
from loadgen.workload.step import plan_step, with_own_media

LOAD = "load: {concurrency: [1], requests_per_step: 2}\n"


@pytest.mark.parametrize(("fmt", "pil"), [("png", "PNG"), ("jpeg", "JPEG")])
def test_a_synthetic_image_has_its_size_and_format(fmt: str, pil: str) -> None:
    m = synthetic_image(np.random.default_rng(3), 320, 200, fmt)
    data = m.raw()
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.size, image.mode) == (pil, (320, 200), "RGB")
    assert (m.kind, m.mime, m.width, m.height, m.nbytes) == (
        "image", f"image/{fmt}", 320, 200, len(data),
    )  # fmt: skip
    assert m.data_url.startswith(f"data:image/{fmt};base64,")
    # not a flat colour: it compresses as a photograph, not to almost nothing
    assert m.nbytes > 320 * 200 * 3 // (4 if fmt == "png" else 40)


def test_synthetic_images_are_seeded() -> None:
    a = synthetic_image(np.random.default_rng(7), 64, 64, "png")
    b = synthetic_image(np.random.default_rng(7), 64, 64, "png")
    c = synthetic_image(np.random.default_rng(8), 64, 64, "png")
    assert a == b
    assert a.b64 != c.b64


def test_a_synthetic_wav_has_a_right_header() -> None:
    m = synthetic_wav(np.random.default_rng(1), 1.5, 16000)
    data = m.raw()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 16000)
        assert w.getnframes() == 24000
    assert (m.kind, m.mime, m.seconds, m.nbytes) == ("audio", "audio/wav", 1.5, len(data))
    assert synthetic_wav(np.random.default_rng(1), 1.5, 16000) == m


def test_each_request_gets_its_own_media_the_same_on_a_rerun() -> None:
    images = ImagesSpec.model_validate({"count": {"dist": "fixed", "value": 2}})
    audio = AudioSpec.model_validate({"seconds": {"dist": "fixed", "value": 0.5}})
    maker = MediaMaker(5, images, audio)
    first = maker.make(np.random.default_rng([5, 0, 0]), [0, 1])
    again = maker.make(np.random.default_rng([5, 0, 0]), [0, 1])
    assert first == again
    assert [[m.kind for m in r] for r in first] == [["image", "image", "audio"]] * 2
    assert len({m.b64 for r in first for m in r if m.kind == "image"}) == 4


def prepare(tmp_path: Path, text: str) -> Workload:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return Workload.prepare(load_scenario(path).workload, chat=True)


def test_dataset_images_are_taken_from_the_dataset_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "img").mkdir(parents=True)
    Image.new("RGB", (30, 20), (1, 2, 3)).save(data / "img" / "a.png")
    (data / "d.jsonl").write_text('{"prompt": "what is this", "images": ["img/a.png"]}\n')
    w = prepare(tmp_path, "workload: {dataset: {path: data/d.jsonl}}\n" + LOAD)
    (spec,) = w.requests(np.random.default_rng(0), 1)
    (m,) = spec.media
    assert (m.mime, m.width, m.height) == ("image/png", 30, 20)
    assert m.raw() == (data / "img" / "a.png").read_bytes()


def test_a_missing_dataset_image_names_the_row_and_the_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(
        '{"prompt": "a"}\n{"prompt": "b", "images": ["../gone/x.png"]}\n'
    )
    with pytest.raises(ScenarioError) as exc:
        prepare(tmp_path, "workload: {dataset: {path: d.jsonl}}\n" + LOAD)
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith(f"{tmp_path / 'd.jsonl'}:2: workload.dataset.path: images: ")
    assert str((tmp_path.parent / "gone" / "x.png").resolve()) in text


def test_images_need_an_api_that_takes_them(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("target: {api: openai-completions}\nworkload: {images: {}}\n" + LOAD)
    with pytest.raises(ScenarioError, match=r"workload\.images needs target\.api openai-chat"):
        load_scenario(path)
    path.write_text("target: {api: openai-transcriptions}\n" + LOAD)
    with pytest.raises(ScenarioError, match=r"openai-transcriptions needs workload\.audio"):
        load_scenario(path)


def test_an_open_loop_worker_makes_only_its_own_shares_media(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "workload: {images: {width: {dist: fixed, value: 64}, height: {dist: fixed, value: 48}}}\n"
        "load: {mode: rate, rate: [5], requests_per_step: 9}\n"
    )
    sc = load_scenario(path)
    w = Workload.prepare(sc.workload, chat=True)
    whole = plan_step(w, sc.load, "rate", 5.0, 0)
    made: list[int] = []
    real = MediaMaker.made

    def counted(self: MediaMaker, draw: int, index: int) -> tuple[Media, ...]:
        made.append(index)
        return real(self, draw, index)

    monkeypatch.setattr(MediaMaker, "made", counted)
    shares = []
    for rank in range(2):
        deferred = plan_step(w, sc.load, "rate", 5.0, 0, defer_media=True)
        shares.append(with_own_media(w, deal(deferred, rank, 2)))
    mine = [s.index for s in shares[0].requests]
    assert sorted(made) == sorted(s.index for p in shares for s in p.requests)
    assert len(made) == len(whole.requests) and mine == [0, 2, 4, 6, 8]
    by_index = {s.index: s for p in shares for s in p.requests}
    for s in whole.requests:  # the same bytes as one process makes, none left due
        assert by_index[s.index].media == s.media and by_index[s.index].media_due is None
