"""Exact prompt lengths with a real tokenizer: every prompt has the length the server counts.

The tokenizers are trained here (bpe_fixture), in three flavours: byte-level
(GPT-2/Llama-3), metaspace, and sentencepiece with no pre-tokenizer
(Llama-2). All three take the fast count (only the ends encoded); a tokenizer
that does not split at words and a template that does not put the content in
verbatim take the full count. Counts are checked against a tokenizer loaded
separately from the same file and, for chat, against the template written out
by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

sys.path.insert(0, str(Path(__file__).parent))  # the fixture module next to this file

from bpe_fixture import BOS, DEFAULT, EOS, FLAVOURS, LLAMA3_STYLE, build_tokenizer_dir
from tokenizers import Tokenizer

from loadgen.errors import ScenarioError
from loadgen.workload.chat_template import EXTRA_MESSAGE
from loadgen.workload.tokenizer import PromptTokenizer

LENGTHS = [*range(1, 34), 63, 64, 65, 127, 128, 129, 255, 256, 511, 512, 513, 1000, 1024, 2048]
HISTORY = [
    {"role": "user", "content": "What does the loader do with a missing file?"},
    {"role": "assistant", "content": "It raises one line, naming the file.\nThen it stops."},
]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tokenizers")
    out = {f: build_tokenizer_dir(root / f, flavour=f) for f in FLAVOURS}
    out["llama3"] = build_tokenizer_dir(
        root / "llama3", chat_template=LLAMA3_STYLE, template_file=True, flavour="metaspace"
    )
    return out


@pytest.fixture(scope="module", params=FLAVOURS)
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def tok(dirs: dict[str, Path], flavour: str) -> PromptTokenizer:
    return PromptTokenizer.load(dirs[flavour])


@pytest.fixture(scope="module")
def raw(dirs: dict[str, Path], flavour: str) -> Tokenizer:
    """The same tokenizer.json loaded with tokenizers alone: the independent count."""
    return Tokenizer.from_file(str(dirs[flavour] / "tokenizer.json"))


def by_hand(messages: list[dict[str, str]]) -> str:
    """The DEFAULT template, written out in Python."""
    turns = "".join(f"<|{m['role']}|>\n{m['content']}{EOS}\n" for m in messages)
    return f"{BOS}{turns}<|assistant|>\n"


def test_every_flavour_counts_only_the_ends(tok: PromptTokenizer) -> None:
    assert tok._splits  # words stay apart: the fast count is used (and checked below)


def test_a_tokenizer_that_does_not_split_at_words_is_counted_in_full(
    tmp_path: Path, dirs: dict[str, Path]
) -> None:
    d = build_tokenizer_dir(tmp_path / "nosplit", flavour="metaspace")
    spec = json.loads((d / "tokenizer.json").read_text())
    spec["pre_tokenizer"]["split"] = False  # one piece for the whole text
    (d / "tokenizer.json").write_text(json.dumps(spec))
    tok = PromptTokenizer.load(d)
    assert not tok._splits
    raw = Tokenizer.from_file(str(d / "tokenizer.json"))
    rng = np.random.default_rng(4)
    for n in (1, 2, 3, 17, 128, 513):
        text = tok.text_of_length(n, rng, prefix="" if n < 17 else "Go:")
        assert len(raw.encode(text).ids) == n
        messages = tok.chat_of_length(n + 20, rng, history=HISTORY[:1] if n > 3 else [])
        assert len(raw.encode(by_hand(messages), add_special_tokens=False).ids) == n + 20


def test_completions_prompts_have_exactly_the_asked_length(
    tok: PromptTokenizer, raw: Tokenizer
) -> None:
    rng = np.random.default_rng(7)
    shared = tok.fragment(40, rng)
    for prefix in ("", shared, "Odd prefix: it's 3.5x\n"):
        for n in LENGTHS:
            if n < len(raw.encode(prefix).ids):
                with pytest.raises(ValueError, match="too few"):
                    tok.text_of_length(n, rng, prefix=prefix)
                continue
            text = tok.text_of_length(n, rng, prefix=prefix)
            assert text.startswith(prefix)
            assert len(raw.encode(text, add_special_tokens=True).ids) == n, (n, prefix)
            assert tok.count_text(text) == n


def test_chat_prompts_have_exactly_the_asked_length(tok: PromptTokenizer, raw: Tokenizer) -> None:
    rng = np.random.default_rng(8)
    shared = tok.fragment(25, rng)
    for history in ([], HISTORY):
        for prefix in ("", shared):
            floor = len(
                raw.encode(
                    by_hand([*history, {"role": "user", "content": prefix}]),
                    add_special_tokens=False,
                ).ids
            )
            for n in LENGTHS:
                if n < floor:
                    with pytest.raises(ValueError, match="too few"):
                        tok.chat_of_length(n, rng, history=history, prefix=prefix)
                    continue
                messages = tok.chat_of_length(n, rng, history=history, prefix=prefix)
                assert messages[:-1] == history
                assert messages[-1]["role"] == "user"
                assert messages[-1]["content"].startswith(prefix)
                rendered = by_hand(messages)
                assert len(raw.encode(rendered, add_special_tokens=False).ids) == n
                assert tok.count_chat(messages) == n


def test_chat_counts_the_template_without_adding_bos(tok: PromptTokenizer, raw: Tokenizer) -> None:
    messages = [{"role": "user", "content": "hello"}]
    ids = raw.encode(by_hand(messages), add_special_tokens=False).ids
    assert ids.count(raw.token_to_id(BOS)) == 1  # the template's own, not a second one
    assert tok.count_chat(messages) == len(ids)
    assert (
        tok.count_text("hello")
        == len(raw.encode("hello").ids)
        == 1 + len(raw.encode("hello", add_special_tokens=False).ids)
    )


def test_fragments_have_exactly_the_asked_length_and_no_special_tokens(
    tok: PromptTokenizer, raw: Tokenizer
) -> None:
    rng = np.random.default_rng(9)
    for n in (0, *LENGTHS):
        text = tok.fragment(n, rng)
        ids = raw.encode(text, add_special_tokens=False).ids
        assert len(ids) == n
        assert not set(ids) & set(raw.get_added_tokens_decoder())


def test_same_seed_same_prompts_other_seed_others(tok: PromptTokenizer) -> None:
    def make(seed: int) -> tuple[str, list[dict[str, str]], str]:
        rng = np.random.default_rng(seed)
        return (
            tok.text_of_length(300, rng),
            tok.chat_of_length(300, rng, history=HISTORY),
            tok.fragment(50, rng),
        )

    assert make(0) == make(0)
    assert make(0) != make(1)
    text = make(0)[0]
    assert len(set(text.split())) > 100  # varied words, not one repeated


def test_prompts_are_plain_words(tok: PromptTokenizer) -> None:
    text = tok.text_of_length(200, np.random.default_rng(3))
    words = text.split(" ")
    assert all(w.isascii() and w.isalpha() for w in words)


def test_a_model_dir_with_chat_template_jinja(dirs: dict[str, Path]) -> None:
    config = json.loads((dirs["llama3"] / "tokenizer_config.json").read_text())
    assert "chat_template" not in config  # only the file has it
    tok = PromptTokenizer.load(dirs["llama3"])
    assert tok.has_chat_template
    rng = np.random.default_rng(1)
    for n in (80, 81, 100, 513):
        messages = tok.chat_of_length(n, rng, history=HISTORY, prefix="Shared start.")
        assert tok.count_chat(messages) == n


def test_template_file_and_config_key_give_the_same_count(tmp_path: Path) -> None:
    in_file = PromptTokenizer.load(build_tokenizer_dir(tmp_path / "a", template_file=True))
    in_config = PromptTokenizer.load(build_tokenizer_dir(tmp_path / "b"))
    messages = in_config.chat_of_length(77, np.random.default_rng(2), history=HISTORY)
    assert in_file.count_chat(messages) == in_config.count_chat(messages) == 77
    both = build_tokenizer_dir(tmp_path / "c")
    (both / "chat_template.jinja").write_text("{{ bos_token }}X{{ messages[-1]['content'] }}")
    assert PromptTokenizer.load(both).count_chat([{"role": "user", "content": ""}]) == 2


def test_named_templates_use_the_default_one(tmp_path: Path) -> None:
    d = build_tokenizer_dir(tmp_path / "m", chat_template=None)
    config = json.loads((d / "tokenizer_config.json").read_text())
    config["chat_template"] = [
        {"name": "tool_use", "template": "{{ raise_exception('not this one') }}"},
        {"name": "default", "template": DEFAULT},
    ]
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    tok = PromptTokenizer.load(d)
    assert tok.count_chat(tok.chat_of_length(30, np.random.default_rng(0))) == 30


def test_hf_helpers_and_openai_content_format(dirs: dict[str, Path]) -> None:
    tok = PromptTokenizer.load(dirs["llama3"])
    template = tok._template
    assert template is not None and template.openai_content  # it loops over content
    text = template.render([{"role": "user", "content": "  hi  "}])
    assert text.startswith("<s><|system|>\nToday is ")  # strftime_now
    assert text.endswith("<|user|>\nhi</s><|assistant|>\n")  # trim, whitespace control
    with pytest.raises(ScenarioError, match="roles must alternate") as e:
        tok.count_chat([{"role": "assistant", "content": "first"}])
    assert "\n" not in str(e.value)
    plain = PromptTokenizer.load(dirs["bytelevel"])._template
    assert plain is not None and not plain.openai_content


def test_tojson_and_generation_tags_render_as_in_transformers(tmp_path: Path) -> None:
    template = (
        "{% for m in messages %}{% generation %}{{ m | tojson }}{% endgeneration %}"
        "{% if loop.last %}{% break %}{% endif %}{% endfor %}"
    )
    tok = PromptTokenizer.load(build_tokenizer_dir(tmp_path / "t", chat_template=template))
    assert tok._template is not None
    text = tok._template.render([{"role": "user", "content": "<b>é</b>"}])
    assert text == '{"role": "user", "content": "<b>é</b>"}'  # no HTML escaping, no \\u


def test_no_template_means_no_chat(tmp_path: Path, dirs: dict[str, Path]) -> None:
    for path in (
        build_tokenizer_dir(tmp_path / "none", chat_template=None),
        dirs["bytelevel"] / "tokenizer.json",  # a bare file: no config read
    ):
        tok = PromptTokenizer.load(path)
        assert not tok.has_chat_template
        assert tok.count_text(tok.text_of_length(12, np.random.default_rng(0))) == 12
        with pytest.raises(ScenarioError, match="no chat template") as e:
            tok.chat_of_length(12, np.random.default_rng(0))
        assert "\n" not in str(e.value)
        with pytest.raises(ScenarioError, match="no chat template"):
            tok.count_chat([{"role": "user", "content": "x"}])


def test_llama_class_flags_rebuild_the_post_processor(tmp_path: Path) -> None:
    d = build_tokenizer_dir(tmp_path / "llama")
    config = json.loads((d / "tokenizer_config.json").read_text())
    config |= {"tokenizer_class": "LlamaTokenizerFast", "add_eos_token": True}
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    assert PromptTokenizer.load(d).count_text("") == 2  # BOS and EOS, as transformers does
    config |= {"add_bos_token": False, "add_eos_token": False}
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    tok = PromptTokenizer.load(d)
    assert tok.count_text("") == 0
    assert tok.count_text(tok.text_of_length(9, np.random.default_rng(0))) == 9


def one_line_error(path: Path, expected: str) -> str:
    with pytest.raises(ScenarioError, match=expected) as e:
        PromptTokenizer.load(path)
    message = str(e.value)
    assert "\n" not in message
    return message


def test_a_missing_path_or_tokenizer_json(tmp_path: Path) -> None:
    message = one_line_error(tmp_path / "nowhere", "no such file or directory")
    assert message.startswith(f"{tmp_path / 'nowhere'}: workload.tokenizer: ")
    d = build_tokenizer_dir(tmp_path / "m")
    (d / "tokenizer.json").unlink()
    assert one_line_error(d, "no tokenizer.json in this directory").startswith(str(d))


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("tokenizer.json", "{not json", "not a valid tokenizer.json"),
        ("tokenizer.json", '{"model": 1}', "not a valid tokenizer.json"),
        ("tokenizer_config.json", "[1,", "not valid JSON"),
        ("tokenizer_config.json", "[1]", "expected a JSON object"),
        ("chat_template.json", "{", "not valid JSON"),
        ("chat_template.jinja", "{% for x in %}", "chat_template: not a valid jinja template"),
    ],
)
def test_bad_files_are_one_line_errors_naming_the_file(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    d = build_tokenizer_dir(tmp_path / "m")
    (d / name).write_text(content)
    assert one_line_error(d, expected).startswith(f"{d / name}: ")


def test_a_corrupt_tokenizer_file_given_directly(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_bytes(b"\xff\xfe garbage")
    with pytest.raises(ScenarioError, match=r"not a valid tokenizer\.json") as e:
        PromptTokenizer.load(bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("missing", ["tokenizers", "jinja2"])
def test_a_missing_extra_names_the_install(
    monkeypatch: pytest.MonkeyPatch, dirs: dict[str, Path], missing: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # import now raises ImportError
    with pytest.raises(ScenarioError) as e:
        PromptTokenizer.load(dirs["bytelevel"])
    assert str(e.value) == EXTRA_MESSAGE
    assert EXTRA_MESSAGE == (
        "workload.tokenizer needs the optional extra: pip install 'loadgen[tokenizers]'"
    )


def test_a_long_shared_prefix_is_exact_every_time(tok: PromptTokenizer, raw: Tokenizer) -> None:
    rng = np.random.default_rng(11)
    prefix = tok.fragment(700, rng) + "\n\nQuestion:"
    for n in (760, 761, 900, 1500):
        for _ in range(3):  # the second and third reuse what the first learned
            text = tok.text_of_length(n, rng, prefix=prefix)
            assert text.startswith(prefix)
            assert len(raw.encode(text).ids) == n
            messages = tok.chat_of_length(n + 20, rng, prefix=prefix)
            assert len(raw.encode(by_hand(messages), add_special_tokens=False).ids) == n + 20


def test_a_template_that_looks_at_the_content_is_rendered_for_every_count(tmp_path: Path) -> None:
    template = (
        "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n"
        "{{ m['content'] }}{% if m['content'] | length > 300 %} (long){% endif %}"
        "</s>\n{% endfor %}<|assistant|>\n"
    )
    d = build_tokenizer_dir(tmp_path / "long", chat_template=template)
    tok = PromptTokenizer.load(d)
    raw = Tokenizer.from_file(str(d / "tokenizer.json"))
    rng = np.random.default_rng(5)
    for n in (80, 81, 200, 400):
        messages = tok.chat_of_length(n, rng, history=HISTORY)
        text = "".join(
            f"<|{m['role']}|>\n{m['content']}{' (long)' * (len(m['content']) > 300)}</s>\n"
            for m in messages
        )
        # jinja drops the template's one trailing newline (transformers keeps that default)
        assert len(raw.encode(f"{BOS}{text}<|assistant|>", add_special_tokens=False).ids) == n
        assert tok.count_chat(messages) == n


def test_counting_a_prompt_just_made_needs_no_encoding(tok: PromptTokenizer) -> None:
    rng = np.random.default_rng(6)
    messages = tok.chat_of_length(300, rng, history=HISTORY)
    encode = tok._tok.encode
    try:
        tok._tok = None  # type: ignore[assignment]
        assert tok.count_chat(messages) == 300  # remembered, by the rendered text
    finally:
        tok._tok = encode.__self__
    assert tok.count_chat([*messages[:-1], {"role": "user", "content": "other"}]) < 300


def test_negative_lengths_are_refused(tok: PromptTokenizer) -> None:
    with pytest.raises(ValueError, match="cannot have -1 tokens"):
        tok.fragment(-1, np.random.default_rng(0))
