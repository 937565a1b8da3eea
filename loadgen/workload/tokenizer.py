"""Prompts of exactly N tokens as the server counts them, with the model's own tokenizer.

``workload.tokenizer`` names a ``tokenizer.json`` file or a Hugging Face model
directory (``tokenizer.json``, optionally ``tokenizer_config.json`` and
``chat_template.jinja``); nothing is downloaded. The counts follow vLLM:

- completions: ``encode(prompt, add_special_tokens=True)``: the tokenizer's
  post-processor adds its BOS (vLLM's ``CompletionRequest.add_special_tokens``
  defaults to true);
- chat: the chat template rendered to text (``add_generation_prompt=True``,
  special tokens as variables), then ``encode(text, add_special_tokens=False)``:
  the template writes its own BOS (``ChatCompletionRequest.add_special_tokens``
  defaults to false).

A prompt is made of "clean" words: vocabulary entries that are a plain ASCII
word and add exactly one token after a space, found once at load. Words are
drawn, the text is counted as the server counts it, and words are added or
dropped at the end until the count is exact (bounded rounds).

Counting is the cost, so when the tokenizer's pre-tokenizer is seen at load
to split a long run of clean words exactly at the words (byte-level, regex and
metaspace pre-tokenizers do; a tokenizer without one never qualifies), each
word in the middle is one token whatever its neighbours, and only the ends are
encoded: the prefix and the first words, the last words and what follows.
Chat templates are checked once to treat content the same way.

Imports: numpy, tokenizers (lazily), loadgen.errors, loadgen.workload.chat_template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.workload.chat_template import ChatTemplate, import_optional, read_model_dir

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["PromptTokenizer"]

Message = dict[str, str]

TOKENIZER_FILE = "tokenizer.json"
#: transformers classes whose __init__ rebuilds the post-processor from add_bos/eos_token
BOS_EOS_CLASSES = frozenset({"LlamaTokenizer", "CodeLlamaTokenizer", "GemmaTokenizer"})
#: rounds of add/drop before giving up on an exact length
MAX_ROUNDS = 100
#: clean words kept: enough for varied prompts, few enough to find fast
POOL_SIZE = 8192
#: longest clean word: short words keep prompts (and counting them) short
MAX_WORD = 8
#: words kept at each end when only the ends are encoded
EDGE = 3


class PromptTokenizer:
    """A tokenizer (and chat template) that counts and makes prompts as the server does."""

    __slots__ = (
        "_chat_base",
        "_heads",
        "_pieces",
        "_plain",
        "_specials",
        "_splits",
        "_template",
        "_tok",
        "_window_ok",
        "source",
    )

    def __init__(self, tok: Tokenizer, template: ChatTemplate | None, *, source: str) -> None:
        tok.no_truncation()  # vLLM does not truncate unless asked; a saved setting must not
        tok.no_padding()
        tok.encode_special_tokens = False  # special tokens written in text are matched
        self._tok = tok
        self._template = template
        self.source = source
        self._pieces, self._heads = _clean_words(tok, source)
        self._splits = _splits_at_words(tok, self._pieces)
        self._window_ok: dict[str, bool] = {}
        self._plain: dict[str, int] = {}
        self._specials = self.count_text("")  # what the post-processor adds
        self._chat_base: int | None = None

    @classmethod
    def load(cls, path: str | Path) -> PromptTokenizer:
        """Read a tokenizer.json or a model directory (ScenarioError, one line, if bad)."""
        tokenizers = import_optional("tokenizers")
        p = Path(path)
        if p.is_dir():
            file = p / TOKENIZER_FILE
            if not file.is_file():
                msg = f"{p}: workload.tokenizer: no {TOKENIZER_FILE} in this directory"
                raise ScenarioError(msg)
        elif p.is_file():
            file = p
        else:
            raise ScenarioError(f"{p}: workload.tokenizer: no such file or directory")
        try:
            tok = tokenizers.Tokenizer.from_file(str(file))
        except Exception as e:  # the Rust side raises plain Exception
            msg = f"{file}: workload.tokenizer: not a valid tokenizer.json ({_one_line(e)})"
            raise ScenarioError(msg) from None
        template = None
        if p.is_dir():
            model = read_model_dir(p)
            _hf_post_processor(tok, model.config, model.special)
            if model.template is not None:
                template = ChatTemplate(model.template, model.special, source=model.template_source)
        return cls(tok, template, source=str(p))

    @property
    def has_chat_template(self) -> bool:
        return self._template is not None

    # -- counting ----------------------------------------------------------------------

    def count_text(self, text: str) -> int:
        """Tokens of a completions prompt: special tokens added, as the server adds them."""
        return len(self._tok.encode(text, add_special_tokens=True))

    def count_chat(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of a chat request: the rendered template, no special tokens added."""
        text = self._chat().render(messages)
        return len(self._tok.encode(text, add_special_tokens=False))

    def _count_plain(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False))

    # -- making prompts ----------------------------------------------------------------

    def fragment(self, n: int, rng: np.random.Generator) -> str:
        """``n`` tokens of text with no special tokens: a shared prefix or a block."""
        return self._fit(n, rng, "", self._count_plain, 0, "plain")

    def text_of_length(self, n: int, rng: np.random.Generator, *, prefix: str = "") -> str:
        """A completions prompt of exactly ``n`` tokens that starts with ``prefix``.

        ValueError if the prefix and the special tokens alone take more than ``n``.
        """
        base = self._specials + (self._plain_count(prefix) if prefix else 0)
        return self._fit(n, rng, prefix, self.count_text, base, "text")

    def chat_of_length(
        self,
        n: int,
        rng: np.random.Generator,
        *,
        history: Sequence[Message] = (),
        prefix: str = "",
    ) -> list[Message]:
        """``history`` plus a user message starting with ``prefix``: ``n`` tokens in all.

        ScenarioError if there is no chat template (vLLM refuses chat requests
        then); ValueError if ``history`` and ``prefix`` alone take more than ``n``.
        """
        template = self._chat()
        head = [dict(m) for m in history]

        def count(content: str) -> int:
            text = template.render([*head, {"role": "user", "content": content}])
            return len(self._tok.encode(text, add_special_tokens=False))

        if head:
            base = count(prefix)
        else:
            if self._chat_base is None:
                self._chat_base = count("")
            base = self._chat_base + (self._plain_count(prefix) if prefix else 0)
        content = self._fit(n, rng, prefix, count, base, "chat")
        return [*head, {"role": "user", "content": content}]

    def _chat(self) -> ChatTemplate:
        if self._template is None:
            msg = (
                f"{self.source}: workload.tokenizer: no chat template (chat_template.jinja or "
                "tokenizer_config.json chat_template), and vLLM refuses chat requests without "
                "one; give the model directory, or use the completions API"
            )
            raise ScenarioError(msg)
        return self._template

    def _plain_count(self, text: str) -> int:
        """Tokens of ``text`` alone, cached: prefixes are few and reused."""
        n = self._plain.get(text)
        if n is None:
            if len(self._plain) >= 4096:
                self._plain.clear()
            n = self._plain[text] = self._count_plain(text)
        return n

    def _fit(
        self,
        n: int,
        rng: np.random.Generator,
        prefix: str,
        count: Callable[[str], int],
        estimate: int,
        kind: str,
    ) -> str:
        """``prefix`` plus words, added or dropped at the end until ``count`` is ``n``."""
        if n < 0:
            raise ValueError(f"a prompt cannot have {n} tokens")
        measure = self._measure(prefix, count, kind)
        words = self._draw(n - estimate, rng, start=not prefix)
        for _ in range(MAX_ROUNDS):
            have = measure(words)
            if have == n:
                return prefix + "".join(words)
            if have < n:
                words.extend(self._draw(n - have, rng, start=not prefix and not words))
            elif words:
                del words[max(0, len(words) - (have - n)) :]
            else:
                msg = f"{n} tokens is too few: the prefix and special tokens alone take {have}"
                raise ValueError(msg)
        msg = (
            f"{self.source}: workload.tokenizer: could not make a prompt of exactly {n} tokens "
            f"in {MAX_ROUNDS} rounds"
        )
        raise ScenarioError(msg)

    def _measure(
        self, prefix: str, count: Callable[[str], int], kind: str
    ) -> Callable[[list[str]], int]:
        """``count`` of ``prefix + words``, encoding only the ends when that is exact."""

        def full(words: list[str]) -> int:
            return count(prefix + "".join(words))

        def ends(words: list[str]) -> int:
            if len(words) <= 2 * EDGE + 1:
                return full(words)
            kept = words[:EDGE] + words[-EDGE:]
            return count(prefix + "".join(kept)) + len(words) - 2 * EDGE

        if not self._splits:
            return full
        ok = self._window_ok.get(kind)
        if ok is None:  # one check per kind: the template may treat content its own way
            words = self._draw(4 * EDGE + 32, np.random.default_rng(0), start=not prefix)
            ok = self._window_ok[kind] = full(words) == ends(words)
        return ends if ok else full

    def _draw(self, k: int, rng: np.random.Generator, *, start: bool) -> list[str]:
        """``k`` random words, each " word" (the first bare when it starts the text)."""
        if k <= 0:
            return []
        pieces = self._pieces
        words = [pieces[i] for i in rng.integers(0, len(pieces), size=k).tolist()]
        if start and self._heads:
            words[0] = self._heads[int(rng.integers(0, len(self._heads)))]
        return words


# -- loading helpers ------------------------------------------------------------------------


def _clean_words(tok: Tokenizer, source: str) -> tuple[list[str], list[str]]:
    """(" word" pieces that add one token after text, bare words that are one token alone).

    Vocabulary entries that look like a plain ASCII word (after a byte-level
    "Ġ" or sentencepiece "▁" marker) are decoded and re-encoded to check; the
    lowest ids (the commonest merges) come first, up to :data:`POOL_SIZE`.
    """
    vocab = tok.get_vocab(with_added_tokens=False)
    added = set(tok.get_added_tokens_decoder())
    candidates = sorted(
        i
        for t, i in vocab.items()
        if i not in added and 1 < len(w := t.lstrip("Ġ▁")) <= MAX_WORD and w.isascii()
        if w.isalpha()
    )
    dot = len(tok.encode(".", add_special_tokens=False))
    pieces: dict[str, None] = {}
    heads: dict[str, None] = {}
    for i in candidates:
        word = tok.decode([i], skip_special_tokens=False).strip()
        if not (word.isascii() and word.isalpha()) or f" {word}" in pieces:
            continue
        if len(tok.encode(f". {word}", add_special_tokens=False)) == dot + 1:
            pieces[f" {word}"] = None
            if len(tok.encode(word, add_special_tokens=False)) == 1:
                heads[word] = None
            if len(pieces) >= POOL_SIZE:
                break
    if not pieces:
        msg = f"{source}: workload.tokenizer: no plain word is a single token in this vocabulary"
        raise ScenarioError(msg)
    return list(pieces), list(heads)


def _splits_at_words(tok: Tokenizer, pieces: list[str]) -> bool:
    """True if a run of clean words is pre-tokenized at the words, each word one token.

    Then the model sees each word alone, and a word in the middle of a prompt
    is one token whatever is around it. Checked on every clean word, each next
    to two others, shuffled with a fixed seed.
    """
    if tok.pre_tokenizer is None:
        return False
    order = np.random.default_rng(0).permutation(len(pieces)).tolist()
    words = [pieces[i] for i in order]
    text = "".join(words)
    if tok.normalizer is not None and tok.normalizer.normalize_str(text) != text:
        return False
    try:
        spans = tok.pre_tokenizer.pre_tokenize_str(text)
    except Exception:
        return False
    if len(spans) != len(words):
        return False
    at = 0
    for (_, (start, end)), word in zip(spans, words, strict=True):
        if (start, end) != (at, at + len(word)):
            return False
        at = end
    return len(tok.encode(text, add_special_tokens=False)) == len(words)


def _hf_post_processor(tok: Tokenizer, config: Mapping[str, Any], special: dict[str, Any]) -> None:
    """Llama/Gemma tokenizers: transformers rebuilds BOS/EOS adding from the config's flags."""
    name = str(config.get("tokenizer_class") or "").removesuffix("Fast")
    if name not in BOS_EOS_CLASSES or not {"add_bos_token", "add_eos_token"} & config.keys():
        return
    from tokenizers import processors

    marks: dict[str, int] = {}
    ends: dict[str, str] = {}
    for key, default in (("bos_token", True), ("eos_token", False)):
        token = special.get(key)
        token_id = tok.token_to_id(token) if token else None
        if bool(config.get(f"add_{key}", default)) and token and token_id is not None:
            marks[token] = token_id
            ends[key] = token
    bos = f"{ends['bos_token']}:0 " if "bos_token" in ends else ""
    eos = f" {ends['eos_token']}:0" if "eos_token" in ends else ""
    single = f"{bos}$A:0{eos}"
    pair = f"{single} {bos.replace(':0', ':1')}$B:1{eos.replace(':0', ':1')}"
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=list(marks.items())
    )


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
