"""The vocabulary a prompt tokenizer draws its words from, read once when it is loaded.

Owns the "clean" words (:func:`clean_words`: vocabulary entries that are a
plain ASCII word and add exactly one token after a space) and the check that
a long run of them is split at the words (:func:`splits_at_words`), so a word
in the middle of a prompt is one token whatever its neighbours. Both are used
by :class:`loadgen.workload.tokenizer.PromptTokenizer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from loadgen.errors import ScenarioError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["MAX_WORD", "POOL_SIZE", "clean_words", "splits_at_words"]

#: clean words kept: enough for varied prompts, few enough to find fast
POOL_SIZE = 8192
#: longest clean word: short words keep prompts (and counting them) short
MAX_WORD = 8


def clean_words(tok: Tokenizer, source: str) -> tuple[list[str], list[str]]:
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


def splits_at_words(tok: Tokenizer, pieces: list[str]) -> bool:
    """True if a run of clean words is split at the words, each word one token.

    Then a word in the middle of a prompt is one token whatever is around it.
    With a pre-tokenizer, its pieces must be the words; without one
    (sentencepiece style), the normalizer must write each space as "▁" and no
    vocabulary entry may hold a "▁" after its start, so nothing spans two words.
    Checked on every clean word, each next to two others, shuffled with a fixed seed.
    """
    order = np.random.default_rng(0).permutation(len(pieces)).tolist()
    words = [pieces[i] for i in order]
    text = "".join(words)[1:]  # no space at the very start: a normalizer may add one there
    if tok.pre_tokenizer is None:
        norm = tok.normalizer
        if norm is None or norm.normalize_str(text).lstrip("▁") != text.replace(" ", "▁"):
            return False
        if any("▁" in t.lstrip("▁") for t in tok.get_vocab(with_added_tokens=False)):
            return False
    else:
        if tok.normalizer is not None and tok.normalizer.normalize_str(text) != text:
            return False
        try:
            spans = tok.pre_tokenizer.pre_tokenize_str(text)
        except Exception:
            return False
        ends = [len(w) for w in words]
        ends[0] -= 1
        if [end for _, (_, end) in spans] != np.cumsum(ends).tolist():
            return False
    first = len(tok.encode(words[0][1:], add_special_tokens=False))
    return len(tok.encode(text, add_special_tokens=False)) == first + len(words) - 1
