"""The client side of the tiny uses (S9 Uses, Translation): prompts built here, output parsed
here; the worker only runs chat requests.

Translation (the new recipe of the seed's eval): the user turn ``Translate from English to
<Language>.\\nEnglish: <text>``, the assistant prefilled ``<Language>:``. A one-line text stops
at the first line end. An empty reply is ``TranslationError.Empty``; a reply with the same
letters and digits as the input (case-insensitive) is ``TranslationError.Unchanged`` (failing
tiny models echo), except for input with no letters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class TranslationError(Exception):
    """A translation that produced nothing usable; prints nothing."""

    Empty: type[TranslationError]
    Unchanged: type[TranslationError]


class _Empty(TranslationError):
    def __init__(self, language: str) -> None:
        super().__init__(f"translation to {language}: empty reply")


class _Unchanged(TranslationError):
    def __init__(self, language: str) -> None:
        super().__init__(f"translation to {language}: the reply is the input unchanged")


_Empty.__name__ = _Empty.__qualname__ = "Empty"
_Unchanged.__name__ = _Unchanged.__qualname__ = "Unchanged"
TranslationError.Empty = _Empty
TranslationError.Unchanged = _Unchanged


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, Any]]
    prefill: str
    stop: list[str]
    max_tokens: int


def translate_request(language: str, text: str, max_tokens: int = 256) -> ChatRequest:
    one_line = "\n" not in text.strip("\n")
    return ChatRequest(
        [{"role": "user", "content": f"Translate from English to {language}.\nEnglish: {text}"}],
        f"{language}:",
        ["\n"] if one_line else [],
        max_tokens,
    )


def _letters_and_digits(text: str) -> str:
    return "".join(c.casefold() for c in text if c.isalnum())


def parse_translation(language: str, text: str, reply: str) -> str:
    """The translation in ``reply`` (with or without the prefill), or a TranslationError."""
    prefill = f"{language}:"
    body = reply[len(prefill) :] if reply.startswith(prefill) else reply
    if "\n" not in text.strip("\n"):
        body = body.strip(" \t").split("\n", 1)[0]
    body = body.strip()
    if not body:
        raise TranslationError.Empty(language)
    has_letters = any(c.isalpha() for c in text)
    if has_letters and _letters_and_digits(body) == _letters_and_digits(text):
        raise TranslationError.Unchanged(language)
    return body


# The seed's eval: 10 short English sentences into 4 languages, greedy, first line.
EVAL_LANGUAGES: tuple[str, ...] = ("German", "French", "Spanish", "Portuguese")
EVAL_SENTENCES: tuple[str, ...] = (
    "hello",
    "good morning",
    "my friend",
    "Thank you very much.",
    "Where is the train station?",
    "I would like a coffee, please.",
    "The weather is nice today.",
    "How much does this cost?",
    "I do not understand.",
    "See you tomorrow.",
)


def chrf(hypothesis: str, reference: str, n: int = 6, beta: float = 2.0) -> float:
    """chrF (0 to 100): the character n-gram F-score, n = 1..6, spaces removed."""
    hyp = hypothesis.replace(" ", "")
    ref = reference.replace(" ", "")
    precisions: list[float] = []
    recalls: list[float] = []
    for k in range(1, n + 1):
        h = _grams(hyp, k)
        g = _grams(ref, k)
        if not h or not g:
            continue
        common = sum(min(count, g.get(gram, 0)) for gram, count in h.items())
        precisions.append(common / sum(h.values()))
        recalls.append(common / sum(g.values()))
    if not precisions:
        return 0.0
    p = sum(precisions) / len(precisions)
    r = sum(recalls) / len(recalls)
    if p == 0 and r == 0:
        return 0.0
    return 100.0 * (1 + beta**2) * p * r / (beta**2 * p + r)


def _grams(text: str, k: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(len(text) - k + 1):
        out[text[i : i + k]] = out.get(text[i : i + k], 0) + 1
    return out
