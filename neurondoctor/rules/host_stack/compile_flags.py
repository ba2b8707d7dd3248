"""Compiler flags as the compile cache keys them (pure).

An entry is `MODULE_<graph>+<flags>`, the `+<flags>` part the first 8 hex digits of the md5 of the entry's compile
flags text (docs/neuron-facts.md §9): before neuronx-cc 2.15 the words joined by spaces, as `compile_flags.txt` holds
them (`--model-type=transformer --auto-cast=none` is `+2c2d707e` in the public 2.12 and 2.14 copies), from 2.15 the
JSON list `compile_flags.json` holds (`[]` is `+d7517139` in the 2.15 copy; how a longer list is spaced is ASSUMED
to be Python's json.dumps). The words are NEURON_CC_FLAGS's, the wrapper's own flags left out: two users' compile
logs in aws-neuron-sdk's tracker show torch-neuronx's `--target`, `--framework` and `--verbose` outside the key (no
NEURON_CC_FLAGS gives `+d41d8cd9`, the md5 of nothing; `--model-type=transformer --distribution-strategy=llm-training
--enable-saturate-infinity -O2 --model-type=transformer` gives the `+55d6a20f` of its log). So removing a flag
changes the key as much as adding one.
"""

from __future__ import annotations

from collections.abc import Sequence

# Flags the compile wrapper takes for itself: they are not in an entry's compile_flags (docs/neuron-facts.md §9).
WRAPPER_FLAGS = ("--cache_dir", "--retry_failed_compilation", "--no_cache", "--log_level")
_WRAPPER_VALUED = ("--cache_dir", "--log_level")  # given as the next word when not as `=value`


def compiler_flags(words: Sequence[str]) -> frozenset[str]:
    """The compiler's own flags, each as `--name=value` (a value given as the next word joined to it), wrapper
    flags left out."""
    flags: list[str] = []
    for word in words:
        if flags and not word.startswith("-") and "=" not in flags[-1] and flags[-1].startswith("--"):
            flags[-1] = f"{flags[-1]}={word}"
        else:
            flags.append(word)
    return frozenset(flag for flag in flags if flag.split("=", 1)[0] not in WRAPPER_FLAGS)


def _split(text: str) -> list[str]:
    import shlex  # only with a cache or nodes to compare (check's start-up)

    try:
        return shlex.split(text)
    except ValueError:  # an unbalanced quote: the words as the shell would not read them are still compared
        return text.split()


def user_compiler_flags(text: str) -> frozenset[str]:
    """The compiler flags a NEURON_CC_FLAGS value sets, as `compiler_flags` gives them (the cluster preflight
    compares the same set between nodes)."""
    return compiler_flags(_split(text))


def key_words(text: str) -> list[str]:
    """The words of a NEURON_CC_FLAGS value that make an entry's key, in their order: the wrapper's flags (and the
    value of one given as the next word) left out."""
    words: list[str] = []
    skip_value = False
    for word in _split(text):
        if skip_value and not word.startswith("-"):
            skip_value = False
            continue
        skip_value = False
        name = word.split("=", 1)[0]
        if name in WRAPPER_FLAGS:
            skip_value = name in _WRAPPER_VALUED and "=" not in word
            continue
        words.append(word)
    return words


def flags_keys(words: Sequence[str]) -> frozenset[str]:
    """The `+<flags>` keys these words give: the text form (up to neuronx-cc 2.14) and the JSON form (from 2.15)."""
    import hashlib  # only with a cache and flags to compare (check's start-up)
    import json

    texts = (" ".join(words), json.dumps(list(words)))
    return frozenset(hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:8] for text in texts)
