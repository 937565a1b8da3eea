"""Synthetic prompts of a requested token length, with no tokenizer.

A prompt of N tokens is N words drawn at random from a list of short, common
English words, each of which is one token in the BPE vocabularies of the
popular open models (and exactly one token for the built-in mock, which counts
words). Random draws keep prompts distinct, so a prefix cache cannot make them
free. The server's ``usage.prompt_tokens`` is what reports count when the
server sends it.

Imports: numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VOCABULARY", "make_prompt"]

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


def make_prompt(n_tokens: int, rng: np.random.Generator) -> str:
    """A prompt of ``n_tokens`` space-separated words."""
    idx = rng.integers(0, len(VOCABULARY), size=n_tokens)
    words = VOCABULARY
    return " ".join([words[i] for i in idx.tolist()])
