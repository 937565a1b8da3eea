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
dropped at the end until the count is exact (bounded rounds). The words, and
whether a run of them splits at the words, come from
:mod:`loadgen.workload.tokenizer_vocab`.

Counting is the cost. When a long run of clean words is seen at load to be
split at the words (byte-level, regex and metaspace pre-tokenizers split there;
a sentencepiece-style tokenizer with no pre-tokenizer qualifies when no
vocabulary entry spans a word start), a word in the middle of a prompt is one
token whatever its neighbours. Then only the ends are encoded: the last
:data:`KEEP` characters before the words (a shared prefix, or the rendered
history), the first and last words, and what follows; what the rest adds is
counted in full once and kept. Each kind of prompt is checked once to count
the same both ways, and every chat prompt is rendered once at the end to check
the template put its content in verbatim; otherwise everything is counted in full.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.workload.chat_template import (
    ChatTemplate,
    apply_post_processor,
    import_optional,
    one_line,
    read_model_dir,
)
from loadgen.workload.tokenizer_vocab import clean_words, splits_at_words

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["PromptTokenizer"]

Message = dict[str, str]

TOKENIZER_FILE = "tokenizer.json"
#: rounds of add/drop before giving up on an exact length
MAX_ROUNDS = 100
#: rounds after which words are added or dropped one at a time
CAREFUL_AFTER = 8
#: words kept at each end when only the ends are encoded
EDGE = 3
#: characters of what comes before the words that are encoded with them
KEEP = 256
#: entries kept in each small cache
CACHE_SIZE = 256
#: stands for the content when a chat template is rendered to find what surrounds it
SENTINEL = "\x00loadgen-content\x00"


class PromptTokenizer:
    """A tokenizer (and chat template) that counts and makes prompts as the server does."""

    __slots__ = (
        "_chat_base",
        "_counted",
        "_deltas",
        "_heads",
        "_local_ok",
        "_pieces",
        "_plain",
        "_specials",
        "_splits",
        "_template",
        "_tok",
        "source",
    )

    def __init__(self, tok: Tokenizer, template: ChatTemplate | None, *, source: str) -> None:
        tok.no_truncation()  # vLLM does not truncate unless asked; a saved setting must not
        tok.no_padding()
        tok.encode_special_tokens = False  # special tokens written in text are matched
        self._tok = tok
        self._template = template
        self.source = source
        self._pieces, self._heads = clean_words(tok, source)
        self._splits = splits_at_words(tok, self._pieces)
        self._local_ok: dict[str, bool] = {}  # kind -> counting only the ends is exact
        self._deltas: dict[tuple[str, str, str], int] = {}
        self._counted: dict[str, int] = {}  # rendered chat prompts made here -> their count
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
            msg = f"{file}: workload.tokenizer: not a valid tokenizer.json ({one_line(e)})"
            raise ScenarioError(msg) from None
        template = None
        if p.is_dir():
            model = read_model_dir(p)
            apply_post_processor(tok, model)
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
        known = self._counted.get(text)
        return known if known is not None else self._count_plain(text)

    def _count_plain(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False))

    # -- making prompts ----------------------------------------------------------------

    def fragment(self, n: int, rng: np.random.Generator) -> str:
        """``n`` tokens of text with no special tokens: a shared prefix or a block."""
        return self._fit(n, rng, _Frame("plain", self._count_plain, "", ""), 0, start=True)

    def text_of_length(self, n: int, rng: np.random.Generator, *, prefix: str = "") -> str:
        """A completions prompt of exactly ``n`` tokens that starts with ``prefix``.

        ValueError if the prefix and the special tokens alone take more than ``n``.
        """
        estimate = self._specials + (self._plain_count(prefix) if prefix else 0)
        frame = _Frame("text", self.count_text, prefix, "")
        return prefix + self._fit(n, rng, frame, estimate, start=not prefix)

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

        def render(content: str) -> str:
            return template.render([*head, {"role": "user", "content": content}])

        frame = _chat_frame(render, prefix, self._count_plain)
        if head:  # a guess from the characters; the first count corrects it
            estimate = len(frame.before) // 4
        else:
            if self._chat_base is None:
                self._chat_base = self._count_plain(render(""))
            estimate = self._chat_base + (self._plain_count(prefix) if prefix else 0)
        words = self._fit(n, rng, frame, estimate, start=not prefix)
        text = render(prefix + words)
        if text != frame.text(words):  # not verbatim for these words after all: render each
            frame = _Frame("chat", self._count_plain, "", "", render=render, prefix=prefix)
            words = self._fit(n, rng, frame, estimate, start=not prefix)
            text = render(prefix + words)
        self._remember(text, n)
        return [*head, {"role": "user", "content": prefix + words}]

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
            n = self._count_plain(text)
            _put(self._plain, text, n)
        return n

    def _remember(self, rendered: str, n: int) -> None:
        """A chat prompt just made has ``n`` tokens: counting it again costs a render only."""
        _put(self._counted, rendered, n)

    # -- fitting -----------------------------------------------------------------------

    def _fit(
        self, n: int, rng: np.random.Generator, frame: _Frame, estimate: int, *, start: bool
    ) -> str:
        """Words that bring ``frame`` to exactly ``n`` tokens, added or dropped at the end."""
        if n < 0:
            raise ValueError(f"a prompt cannot have {n} tokens")
        measure = self._measure(frame, start=start)
        words = self._draw(n - estimate, rng, start=start)
        for i in range(MAX_ROUNDS):
            have = measure(words)
            if have == n:
                return "".join(words)
            step = abs(n - have) if i < CAREFUL_AFTER else 1  # words may take more than one
            if have < n:
                words.extend(self._draw(step, rng, start=start and not words))
            elif words:
                del words[max(0, len(words) - step) :]
            else:
                msg = f"{n} tokens is too few: the prefix and special tokens alone take {have}"
                raise ValueError(msg)
        msg = (
            f"{self.source}: workload.tokenizer: could not make a prompt of exactly {n} tokens "
            f"in {MAX_ROUNDS} rounds"
        )
        raise ScenarioError(msg)

    def _measure(self, frame: _Frame, *, start: bool) -> Callable[[list[str]], int]:
        """The count of ``frame`` with some words, encoding as little as is exact.

        Where the pre-tokenizer splits at words (and the text is ``before + words
        + after``), the count is ``delta + local``: ``local`` encodes the last
        :data:`KEEP` characters of ``before``, the first and last :data:`EDGE`
        words and ``after``, and counts a token for each word between; ``delta``
        is what the rest of ``before`` adds, found once by counting in full and
        kept for the next prompts with the same ``before``. Each kind of prompt
        is checked once to give the full count this way, or is always counted
        in full.
        """
        enc, before, after = frame.enc, frame.before, frame.after
        near = before[max(0, len(before) - KEEP) :]

        def full(words: list[str]) -> int:
            return enc(frame.text("".join(words)))

        def local(words: list[str]) -> int:
            if len(words) <= 2 * EDGE + 1:
                return enc(near + "".join(words) + after)
            kept = "".join(words[:EDGE] + words[-EDGE:])
            return enc(near + kept + after) + len(words) - 2 * EDGE

        if not self._splits or frame.render is not None or self._local_ok.get(frame.kind) is False:
            return full
        key = (frame.kind, before, after)

        def measure(words: list[str]) -> int:
            if self._local_ok.get(frame.kind) is False:
                return full(words)
            delta = self._deltas.get(key)
            if delta is not None:
                return delta + local(words)
            have = full(words)
            delta = have - local(words)
            if frame.kind not in self._local_ok:  # the one check, on other words
                other = self._draw(len(words) + 2 * EDGE + 9, np.random.default_rng(0), start=start)
                self._local_ok[frame.kind] = full(other) == delta + local(other)
            if self._local_ok[frame.kind]:
                _put(self._deltas, key, delta)
            return have

        return measure

    def _draw(self, k: int, rng: np.random.Generator, *, start: bool) -> list[str]:
        """``k`` random words, each " word" (the first bare when it starts the text)."""
        if k <= 0:
            return []
        pieces = self._pieces
        words = [pieces[i] for i in rng.integers(0, len(pieces), size=k).tolist()]
        if start and self._heads:
            words[0] = self._heads[int(rng.integers(0, len(self._heads)))]
        return words


@dataclass(slots=True, frozen=True)
class _Frame:
    """What a prompt's words go into: ``before + words + after``, counted by ``enc``.

    ``render`` is set when a chat template does not put the content in verbatim;
    the text is then rendered for every count.
    """

    kind: str
    enc: Callable[[str], int]
    before: str
    after: str
    render: Callable[[str], str] | None = None
    prefix: str = ""

    def text(self, words: str) -> str:
        if self.render is not None:
            return self.render(self.prefix + words)
        return self.before + words + self.after


def _chat_frame(render: Callable[[str], str], prefix: str, enc: Callable[[str], int]) -> _Frame:
    """The rendered text around the content, if the template puts the content in verbatim."""
    parts = render(prefix + SENTINEL).split(SENTINEL)
    words = " probe words" if prefix else "probe words"  # as the drawn words come
    if len(parts) == 2 and render(prefix + words) == parts[0] + words + parts[1]:
        return _Frame("chat", enc, parts[0], parts[1])
    return _Frame("chat", enc, "", "", render=render, prefix=prefix)


def _put(cache: dict[Any, int], key: Any, value: int) -> None:
    if len(cache) >= CACHE_SIZE:
        cache.clear()
    cache[key] = value
