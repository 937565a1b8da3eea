"""A small Hugging Face tokenizer directory for tests, made on the spot with ``tokenizers``.

Like ``scripts/build_tiny_llama.py`` but without transformers: a byte-level BPE
(or a sentencepiece-style one, see :data:`FLAVOURS`) trained on a few of this
interpreter's standard-library sources, a post-processor that adds BOS,
and a ``tokenizer_config.json`` with the special tokens and a chat template.
Training takes a fraction of a second and is done once per process.

    from bpe_fixture import build_tokenizer_dir
    model_dir = build_tokenizer_dir(tmp_path / "model")
"""

from __future__ import annotations

import functools
import json
import sysconfig
from pathlib import Path

__all__ = [
    "BOS",
    "DEFAULT",
    "EOS",
    "FLAVOURS",
    "LLAMA3_STYLE",
    "SPECIAL_TOKENS",
    "build_tokenizer_dir",
    "trained_tokenizer_json",
]

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>")
BOS, EOS, UNK, PAD = "<s>", "</s>", "<unk>", "<pad>"
TRAIN_FILES = 40
VOCAB_SIZE = 4096

#: the template of scripts/build_tiny_llama.py: BOS, role tags, EOS after each message
DEFAULT = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '</s>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

#: a template in the style of the big models': whitespace control, a system default,
#: strftime_now, raise_exception, loop.last, and content given as a list of parts
LLAMA3_STYLE = """{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] | trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "Today is " + strftime_now("%d %b %Y") + "." %}
{%- endif %}
<|system|>
{{ system_message }}</s>
{%- for message in messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant') }}
    {%- endif %}
    {{- '<|' + message['role'] + '|>\\n' }}
    {%- if message['content'] is string %}
        {{- message['content'] | trim }}
    {%- else %}
        {%- for part in message['content'] %}
            {%- if part['type'] == 'text' %}{{ part['text'] | trim }}{% endif %}
        {%- endfor %}
    {%- endif %}
    {{- '</s>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|assistant|>\\n' }}
{%- endif %}
"""


def _training_files(count: int) -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(str(p) for p in stdlib.glob("*.py"))[:count]
    if not files:
        raise RuntimeError(f"no *.py files under {stdlib} to train a tokenizer on")
    return files


FLAVOURS = ("bytelevel", "metaspace", "sentencepiece")


@functools.cache
def trained_tokenizer_json(flavour: str = "bytelevel") -> str:
    """The trained tokenizer as tokenizer.json text, trained once per process and flavour.

    - bytelevel: GPT-2/Llama-3 style, "Ġ" marks a space, a regex pre-tokenizer;
    - metaspace: "▁" marks a word start, split there by the pre-tokenizer;
    - sentencepiece: Llama-2 style, a normalizer writes the "▁"s and there is no
      pre-tokenizer at all, so the whole text is one piece for the model.
    """
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )

    if flavour not in FLAVOURS:
        raise ValueError(f"flavour {flavour!r} is not one of {FLAVOURS}")
    tok = Tokenizer(models.BPE(unk_token=UNK))
    alphabet: list[str] = []
    if flavour == "bytelevel":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    else:  # sentencepiece trains split at words too, as sentencepiece does by default
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tok.train(_training_files(TRAIN_FILES), trainer)
    if flavour == "sentencepiece":
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
        )
        tok.pre_tokenizer = None
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    return tok.to_str()


def build_tokenizer_dir(
    path: Path,
    *,
    chat_template: str | None = DEFAULT,
    template_file: bool = False,
    flavour: str = "bytelevel",
) -> Path:
    """Write tokenizer.json and tokenizer_config.json under ``path``; return ``path``.

    ``chat_template=None`` leaves the template out; ``template_file=True`` writes it
    to chat_template.jinja instead of the config, as newer transformers do;
    ``flavour`` is one of :data:`FLAVOURS`.
    """
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer.json").write_text(trained_tokenizer_json(flavour))
    config: dict[str, object] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BOS,
        "eos_token": EOS,
        "unk_token": UNK,
        "pad_token": PAD,
        "model_max_length": 4096,
    }
    if chat_template is not None:
        if template_file:
            (path / "chat_template.jinja").write_text(chat_template)
        else:
            config["chat_template"] = chat_template
    (path / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    return path
