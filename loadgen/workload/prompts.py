"""Prompts of a requested token length: with a tokenizer, calibrated, or approximate.

Three sources, named in the summary as ``prompt_length_source``:

- ``tokenizer``: ``workload.tokenizer`` is given; every prompt has exactly the
  requested number of tokens as the server counts them (chat template included
  for openai-chat), see :mod:`loadgen.workload.tokenizer`.
- ``server``: no tokenizer, but the server's ``/tokenize`` measured how many
  tokens a word costs and what the request adds around it (BOS, the chat
  template); prompts get ``round((n - overhead) / tokens_per_word)`` words.
- ``approximate``: N random common words for N tokens (one token each for the
  built-in mock and, roughly, for common BPE vocabularies).

``token_ids`` (N random ids, completions only) is exact with no tokenizer.

A shared prefix is a fixed fragment the prompt starts with; the rest is drawn
fresh per request, so a prefix cache can serve the prefix and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from loadgen.errors import ScenarioError

if TYPE_CHECKING:
    from loadgen.workload.tokenizer import PromptTokenizer

__all__ = ["VOCABULARY", "Calibration", "PromptMaker", "make_prompt", "word_count"]

VOCABULARY: tuple[str, ...] = tuple(
    """
    the of and to in is it you that he was for on are with as his they be at one have this
    from or had by hot but some what there we can out other were all your when up use word
    how said an each she which do their time if will way about many then them would write
    like so these her long make thing see him two has look more day could go come did my
    sound no most number who over know water than call first people may down side been now
    find any new work part take get place made live where after back little only round man
    year came show every good me give our under name very through just form much great think
    say help low line before turn cause same mean differ move right boy old too does tell
    sentence set three want air well also play small end put home read hand port large spell
    add even land here must big high such follow act why ask men change went light kind off
    need house picture try us again animal point mother world near build self earth father
    head stand own page should country found answer school grow study still learn plant cover
    food sun four thought let keep eye never last door between city tree cross since hard
    start might story saw far sea draw left late run while press close night real life few
    stop open seem together next white children begin got walk example ease paper often always
    music those both mark book letter until mile river car feet care second group carry took
    rain eat room friend began idea fish mountain north once base hear horse cut sure watch
    color face wood main enough plain girl usual young ready above ever red list though feel
    talk bird soon body dog family direct pose leave song measure state product black short
    """.split()
)

Message = dict[str, str]


def make_prompt(n_tokens: int, rng: np.random.Generator) -> str:
    """A prompt of ``n_tokens`` space-separated words."""
    idx = rng.integers(0, len(VOCABULARY), size=n_tokens)
    words = VOCABULARY
    return " ".join([words[i] for i in idx.tolist()])


def word_count(prompt: str | list[Message]) -> int:
    """Whitespace-separated words of a text or of every message's content."""
    if isinstance(prompt, str):
        return len(prompt.split())
    return sum(len(m.get("content", "").split()) for m in prompt)


@dataclass(slots=True, frozen=True)
class Calibration:
    """What the server's ``/tokenize`` said: tokens = overhead + per_word x words."""

    per_word: float
    overhead: float
    # -- engine tokenizers: whose tokenize endpoint answered (loadgen.target.tokenize)
    engine: str = "vllm"  # vllm | llama.cpp | tgi
    endpoint: str = "POST /tokenize"
    chat_template: bool = False  # the counts include the chat template's tokens

    def words_for(self, n_tokens: int) -> int:
        return max(1, round((n_tokens - self.overhead) / self.per_word))

    def tokens_for(self, words: int) -> int:
        return round(self.overhead + self.per_word * words)


class PromptMaker:
    """Makes prompts for one target API from the best length source available."""

    def __init__(
        self,
        chat: bool,
        tokenizer: PromptTokenizer | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        self.chat = chat
        self.tokenizer = tokenizer
        self.calibration = calibration if tokenizer is None else None

    @property
    def source(self) -> str:
        if self.tokenizer is not None:
            return "tokenizer"
        return "server" if self.calibration is not None else "approximate"

    def fragment(self, n_tokens: int, rng: np.random.Generator) -> str:
        """``n_tokens`` of text with no special tokens: a shared prefix or a trace block."""
        if self.tokenizer is not None:
            return self.tokenizer.fragment(n_tokens, rng)
        if self.calibration is not None:
            n_tokens = max(1, round(n_tokens / self.calibration.per_word))
        return make_prompt(n_tokens, rng)

    def prompt(
        self, n_tokens: int, rng: np.random.Generator, prefix: str = ""
    ) -> tuple[str | list[Message], int]:
        """A prompt of ``n_tokens`` starting with ``prefix``, and its planned length."""
        tok = self.tokenizer
        if tok is not None:
            try:
                if self.chat:
                    return tok.chat_of_length(n_tokens, rng, prefix=prefix), n_tokens
                return tok.text_of_length(n_tokens, rng, prefix=prefix), n_tokens
            except ValueError as exc:
                msg = f"{tok.source}: workload.prompt_tokens: {exc}"
                raise ScenarioError(msg) from None
        cal = self.calibration
        words = n_tokens if cal is None else cal.words_for(n_tokens)
        have = len(prefix.split())
        text = prefix if words <= have else _join(prefix, make_prompt(words - have, rng))
        words = len(text.split())
        planned = words if cal is None else cal.tokens_for(words)
        return ([{"role": "user", "content": text}] if self.chat else text), planned

    def user_turn(
        self, history: list[Message], n_tokens: int, rng: np.random.Generator
    ) -> tuple[list[Message], int]:
        """``history`` plus a new user message of about ``n_tokens``; the whole prompt's length.

        With a tokenizer the new message is sized so that the whole conversation
        has the length the tokenizer counts plus ``n_tokens``, and the length
        returned is exact.
        """
        tok = self.tokenizer
        if tok is not None:
            base = tok.count_chat(history) if history else 0
            total = base + n_tokens
            try:
                messages = tok.chat_of_length(total, rng, history=history)
            except ValueError:
                messages = [*history, {"role": "user", "content": tok.fragment(n_tokens, rng)}]
            return messages, tok.count_chat(messages)
        messages = [*history, {"role": "user", "content": self.prompt_text(n_tokens, rng)}]
        words = word_count(messages)
        cal = self.calibration
        return messages, words if cal is None else cal.tokens_for(words)

    def prompt_text(self, n_tokens: int, rng: np.random.Generator) -> str:
        cal = self.calibration
        return make_prompt(n_tokens if cal is None else cal.words_for(n_tokens), rng)

    def count(self, prompt: str | list[Message]) -> int:
        """The planned length of a given prompt (a dataset's)."""
        tok = self.tokenizer
        if tok is not None:
            return tok.count_text(prompt) if isinstance(prompt, str) else tok.count_chat(prompt)
        if isinstance(prompt, str) and self.chat:
            prompt = [{"role": "user", "content": prompt}]
        words = word_count(prompt)
        cal = self.calibration
        return words if cal is None else cal.tokens_for(words)

    def count_text(self, text: str) -> int:
        """Tokens of a piece of text (a dataset's reference answer)."""
        if self.tokenizer is not None:
            return self.tokenizer.count_text(text)
        cal = self.calibration
        words = len(text.split())
        return words if cal is None else max(1, round(cal.per_word * words))


def _join(prefix: str, rest: str) -> str:
    return f"{prefix} {rest}" if prefix else rest
