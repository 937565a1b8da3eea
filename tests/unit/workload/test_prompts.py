"""Prompts of a requested length from each source: approximate, calibrated, a tokenizer.

The tokenizer here is a stand-in that counts words (one per word, one BOS, two
per chat message): it checks what PromptMaker does with a tokenizer, while
tests/unit/workload/test_tokenizer.py checks a real one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pytest

from loadgen.errors import ScenarioError
from loadgen.workload.prompts import VOCABULARY, Calibration, PromptMaker, make_prompt, word_count

CAL = Calibration(per_word=1.3, overhead=5.0)  # 1.3 tokens a word, 5 around the request


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


class WordTokenizer:
    """Tokens: one per word, plus a BOS; a chat adds two per message."""

    source = "words.json"

    def count_text(self, text: str) -> int:
        return len(text.split()) + 1

    def count_chat(self, messages: Sequence[Mapping[str, str]]) -> int:
        return 1 + sum(len(m["content"].split()) + 2 for m in messages)

    def fragment(self, n: int, rng: np.random.Generator) -> str:
        return make_prompt(n, rng)

    def text_of_length(self, n: int, rng: np.random.Generator, *, prefix: str = "") -> str:
        have = len(prefix.split())
        if n - 1 < have:
            raise ValueError(f"{n} tokens is shorter than the prefix")
        return " ".join(filter(None, [prefix, make_prompt(n - 1 - have, rng)]))

    def chat_of_length(
        self,
        n: int,
        rng: np.random.Generator,
        *,
        prefix: str = "",
        history: Sequence[Mapping[str, str]] = (),
    ) -> list[dict[str, str]]:
        words = n - self.count_chat(history) - 2 - len(prefix.split())
        if words < 1:
            raise ValueError(f"{n} tokens leave no room for a message")
        content = " ".join(filter(None, [prefix, make_prompt(words, rng)]))
        return [*map(dict, history), {"role": "user", "content": content}]


def maker(chat: bool = False, *, tok: bool = False, cal: Calibration | None = None) -> PromptMaker:
    return PromptMaker(chat, cast(Any, WordTokenizer()) if tok else None, cal)


def test_make_prompt_draws_words_of_the_vocabulary() -> None:
    text = make_prompt(20_000, rng())
    words = text.split()
    assert len(words) == 20_000
    assert set(words) == set(VOCABULARY)  # every word turns up (each ~70 times)
    assert make_prompt(50, rng(0)) == make_prompt(50, rng(0))
    assert make_prompt(50, rng(0)) != make_prompt(50, rng(1))
    assert make_prompt(0, rng()) == ""


def test_word_count() -> None:
    assert word_count(" one  two\tthree\n") == 3
    assert word_count([{"role": "system", "content": "a b"}, {"role": "user", "content": "c"}]) == 3
    assert word_count([{"role": "assistant"}]) == 0


def test_calibration_by_hand() -> None:
    assert CAL.words_for(100) == 73  # (100 - 5) / 1.3 = 73.08
    assert CAL.tokens_for(73) == 100  # 5 + 1.3 x 73 = 99.9
    assert CAL.words_for(3) == 1  # never fewer than one word
    assert CAL.words_for(6) == 1


def test_source_names_the_best_length_source() -> None:
    assert maker().source == "approximate"
    assert maker(cal=CAL).source == "server"
    with_both = maker(tok=True, cal=CAL)
    assert with_both.source == "tokenizer"
    assert with_both.calibration is None  # a tokenizer makes the calibration moot


@pytest.mark.parametrize("chat", [False, True])
def test_approximate_prompt_has_one_word_per_token(chat: bool) -> None:
    prompt, planned = maker(chat).prompt(37, rng())
    assert planned == 37 == word_count(prompt)
    if chat:
        assert isinstance(prompt, list) and [m["role"] for m in prompt] == ["user"]
    else:
        assert isinstance(prompt, str)
    assert maker(chat).prompt(37, rng(4)) == maker(chat).prompt(37, rng(4))


def test_calibrated_prompt_lengths_stay_within_a_word_of_the_request() -> None:
    m = maker(cal=CAL)
    for n in range(8, 2000, 7):
        prompt, planned = m.prompt(n, rng(n))
        assert word_count(prompt) == CAL.words_for(n)
        assert planned == CAL.tokens_for(word_count(prompt))
        # words are rounded (half a word's tokens off at most), then the tokens
        assert abs(planned - n) <= CAL.per_word / 2 + 0.5


def test_prefix_starts_the_prompt_and_counts_toward_its_length() -> None:
    prefix = "shared prefix of six words here"
    text, planned = maker().prompt(20, rng(), prefix=prefix)
    assert isinstance(text, str) and text.startswith(prefix + " ")
    assert planned == 20 == word_count(text)
    # a prefix longer than the request is the whole prompt
    assert maker().prompt(4, rng(), prefix=prefix) == (prefix, 6)
    assert maker().prompt(6, rng(), prefix=prefix) == (prefix, 6)  # as long: nothing added
    chat, planned = maker(chat=True, cal=CAL).prompt(40, rng(), prefix=prefix)
    assert isinstance(chat, list) and chat[0]["content"].startswith(prefix + " ")
    assert word_count(chat) == CAL.words_for(40)
    assert planned == CAL.tokens_for(CAL.words_for(40))


def test_fragment_has_no_overhead() -> None:
    assert word_count(maker().fragment(12, rng())) == 12
    assert word_count(maker(cal=CAL).fragment(13, rng())) == 10  # 13 / 1.3
    assert word_count(maker(cal=CAL).fragment(1, rng())) == 1
    assert word_count(maker(tok=True).fragment(9, rng())) == 9


@pytest.mark.parametrize("chat", [False, True])
def test_tokenizer_prompt_has_the_exact_length(chat: bool) -> None:
    tok = WordTokenizer()
    prompt, planned = maker(chat, tok=True).prompt(30, rng(), prefix="a shared start")
    assert planned == 30
    if chat:
        assert isinstance(prompt, list) and tok.count_chat(prompt) == 30
        assert prompt[0]["content"].startswith("a shared start ")
    else:
        assert isinstance(prompt, str) and tok.count_text(prompt) == 30
        assert prompt.startswith("a shared start ")


def test_a_length_the_tokenizer_cannot_make_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError) as info:
        maker(chat=True, tok=True).prompt(2, rng())
    says = "words.json: workload.prompt_tokens: 2 tokens leave no room for a message"
    assert str(info.value) == says


HISTORY = [
    {"role": "user", "content": "one two three four five"},
    {"role": "assistant", "content": "six seven eight"},
]


def test_user_turn_approximate_and_calibrated() -> None:
    messages, planned = maker(chat=True).user_turn(HISTORY, 10, rng())
    assert messages[:2] == HISTORY and messages[2]["role"] == "user"
    assert word_count(messages[2]["content"]) == 10
    assert planned == 18  # the whole conversation: 5 + 3 + 10 words
    messages, planned = maker(chat=True, cal=CAL).user_turn(HISTORY, 40, rng())
    assert word_count(messages[2]["content"]) == CAL.words_for(40)
    assert planned == CAL.tokens_for(8 + CAL.words_for(40))


def test_user_turn_with_a_tokenizer_is_exact_and_falls_back_to_a_fragment() -> None:
    tok = WordTokenizer()
    m = maker(chat=True, tok=True)
    messages, planned = m.user_turn(HISTORY, 10, rng())
    assert planned == tok.count_chat(messages) == tok.count_chat(HISTORY) + 10
    # a first turn of 2 tokens leaves no room in a message: a 2-token fragment instead
    messages, planned = m.user_turn([], 2, rng())
    assert word_count(messages) == 2 and planned == tok.count_chat(messages) == 5


def test_count_a_given_prompt() -> None:
    text = "five words in this prompt"
    assert maker().count(text) == 5
    assert maker(chat=True).count(text) == 5
    assert maker(cal=CAL).count(HISTORY) == CAL.tokens_for(8)
    assert maker(tok=True).count(text) == 6  # BOS
    assert maker(chat=True, tok=True).count(HISTORY) == 1 + 7 + 5
    assert maker(chat=True, tok=True).count(text) == 6  # a text is counted as text


def test_count_text_leaves_out_the_request_overhead() -> None:
    assert maker().count_text("a b c d") == 4
    assert maker(cal=CAL).count_text("a b c d") == 5  # 1.3 x 4 = 5.2, no overhead
    assert maker(cal=CAL).count_text("") == 1
    assert maker(tok=True).count_text("a b c d") == 5
