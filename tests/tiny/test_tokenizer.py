"""Our byte-level BPE against `tokenizers`, id for id, on tokenizer files `tokenizers` trains
here (the seed's tokenizer::tests: ids/text vs the ids Hugging Face tokenizers gives for the
same files and texts; random text round-trips)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eukhe.tiny.tokenizer import Tokenizer, TokenizerError
from tests.tiny.tokenizer_files import CORPUS, train, write

KINDS = ("gpt2", "llama3", "llama3-ignore-merges")
_CACHE: dict[str, tuple[object, Tokenizer, dict[str, object]]] = {}


def pair(kind: str, tmp: Path | None = None) -> tuple[object, Tokenizer, dict[str, object]]:
    if kind not in _CACHE:
        import tempfile

        reference = train(kind)
        path = write(reference, Path(tempfile.mkdtemp(prefix="ektok")))
        ours = Tokenizer.from_file(path)
        _CACHE[kind] = (reference, ours, json.loads(path.read_text(encoding="utf-8")))
    return _CACHE[kind]


ADVERSARIAL = st.lists(
    st.sampled_from(
        [
            "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|im_", "<think",
            " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\x0b", "\x0c", "\x1c", "\x85", "\u2028",
            "'s", "'S", "'ll", "'LL", "n't", "'", "a", "Hello", "hello", " world", "123", "1234567", "٣",
            "é", "e\u0301", "😀", "👍🏽", "你好", "Привет", "!", "?!", "...", "—", "\u200b", "\ufeff", "\x00",
        ]
    ),  # fmt: skip
    max_size=30,
).map("".join)


@lru_cache(maxsize=1)
def newer_than_the_reference() -> frozenset[int]:
    """Code points the `regex` module knows as assigned that `tokenizers`' Oniguruma does not:
    their Unicode versions differ (here 17 and 16), and for these alone \\p{L} and \\p{N}
    differ (every difference measured lies among them). Our tokenizer splits them as `regex`
    does; the differential tests keep to code points both engines know."""
    import regex as re_module
    from tokenizers import Regex
    from tokenizers import pre_tokenizers as pre

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assigned = "\x00".join(re_module.findall(r"\P{Cn}", every))  # as the regex module knows them
    unassigned = pre.Split(Regex(r"\p{Cn}+"), behavior="isolated")  # as tokenizers knows them
    return frozenset(ord(ch) for piece, _ in unassigned.pre_tokenize_str(assigned) if "\x00" not in piece for ch in piece)


def _known_to_both(text: str) -> bool:
    newer = newer_than_the_reference()
    return not any(ord(ch) in newer for ch in text)


TEXT = st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=0x3FF)), ADVERSARIAL, st.sampled_from(CORPUS)).filter(_known_to_both)


@pytest.mark.parametrize("kind", KINDS)
def test_the_corpus_gives_the_same_ids(kind: str) -> None:
    reference, ours, _ = pair(kind)
    for text in CORPUS + ["", " ", "\n\n", "<|im_start|><|im_end|>"]:
        assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids, repr(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", KINDS)
@given(text=TEXT)
def test_ids_equal_tokenizers_on_random_and_adversarial_text(kind: str, text: str) -> None:
    reference, ours, _ = pair(kind)
    want = reference.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    got = ours.encode(text)
    assert got == want
    assert ours.decode(got) == reference.decode(want)  # type: ignore[attr-defined]
    assert ours.decode(got, skip_special=False) == reference.decode(want, skip_special_tokens=False)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_decode_equals_tokenizers_on_any_ids(kind: str, data: st.DataObject) -> None:
    reference, ours, _ = pair(kind)
    size = reference.get_vocab_size()  # type: ignore[attr-defined]
    ids = data.draw(st.lists(st.integers(0, size - 1), max_size=20))
    assert ours.decode(ids) == reference.decode(ids)  # type: ignore[attr-defined]
    assert ours.decode(ids, skip_special=False) == reference.decode(ids, skip_special_tokens=False)  # type: ignore[attr-defined]


@given(text=st.text())
def test_random_text_round_trips(text: str) -> None:
    _, ours, _ = pair("gpt2")
    assert ours.decode(ours.encode(text), skip_special=False) == text


@pytest.mark.parametrize(
    "path, value",
    [
        (("normalizer",), {"type": "NFC"}),
        (("model", "dropout"), 0.1),
        (("model", "unk_token"), "<unk>"),
        (("model", "byte_fallback"), True),
        (("model", "continuing_subword_prefix"), "##"),
        (("model", "type"), "WordPiece"),
        (("decoder",), {"type": "Metaspace"}),
        (("post_processor",), {"type": "TemplateProcessing"}),
        (("pre_tokenizer",), {"type": "Whitespace"}),
        (("pre_tokenizer", "pretokenizers", 0, "behavior"), "Removed"),
        (("pre_tokenizer", "pretokenizers", 0, "invert"), True),
        (("pre_tokenizer", "pretokenizers", 1, "use_regex"), True),
        (("added_tokens", 0, "lstrip"), True),
        (("added_tokens", 0, "single_word"), True),
        (("model", "merges", 0), "a b c"),
    ],
)
def test_any_other_setting_fails_to_load(path: tuple[object, ...], value: object) -> None:
    _, _, document = pair("llama3")
    doc = json.loads(json.dumps(document))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(TokenizerError):
        Tokenizer.from_document(doc)


def test_unreadable_file_fails_to_load(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{", encoding="utf-8")
    with pytest.raises(TokenizerError):
        Tokenizer.from_file(tmp_path / "tokenizer.json")
    with pytest.raises(TokenizerError):
        Tokenizer.from_document([])


# ------------------------------------------------------------ hardening (issue 30, tiny models)

_PREFIX: dict[tuple[str, bool], tuple[object, Tokenizer | TokenizerError]] = {}


def prefix_pair(kind: str, add_prefix_space: bool) -> tuple[object, Tokenizer | TokenizerError]:
    """`tokenizers`' tokenizer with that add_prefix_space, and ours loaded from its
    tokenizer.json (or the typed refusal of the load)."""
    if (kind, add_prefix_space) not in _PREFIX:
        reference = train(kind, add_prefix_space=add_prefix_space)
        try:
            ours: Tokenizer | TokenizerError = Tokenizer.from_document(json.loads(reference.to_str()))
        except TokenizerError as refused:
            ours = refused
        _PREFIX[kind, add_prefix_space] = (reference, ours)
    return _PREFIX[kind, add_prefix_space]


def _agree_or_refuse(kind: str, add_prefix_space: bool, texts: list[str]) -> None:
    reference, ours = prefix_pair(kind, add_prefix_space)
    if isinstance(ours, TokenizerError):  # a refusal is allowed only of this very setting
        assert add_prefix_space and "add_prefix_space" in str(ours)
        return
    for text in texts:
        want = reference.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
        assert ours.encode(text) == want, repr(text)
        assert ours.decode(want, skip_special=False) == reference.decode(want, skip_special_tokens=False)  # type: ignore[attr-defined]


PREFIX_CASES = [(kind, flag) for kind in ("gpt2", "llama3") for flag in (False, True)]


@pytest.mark.parametrize("kind, add_prefix_space", PREFIX_CASES)
@given(texts=st.lists(TEXT, min_size=1, max_size=12))
def test_add_prefix_space_gives_the_ids_of_tokenizers(kind: str, add_prefix_space: bool, texts: list[str]) -> None:
    """Split+ByteLevel and ByteLevel alone, add_prefix_space on and off: identical ids (or a
    typed refusal at load), over Hypothesis's lists of strings."""
    _agree_or_refuse(kind, add_prefix_space, texts)


@pytest.mark.parametrize("kind, add_prefix_space", PREFIX_CASES)
def test_add_prefix_space_on_five_thousand_strings(kind: str, add_prefix_space: bool) -> None:
    import random

    rng = random.Random(f"prefix-{kind}")
    pieces = [*CORPUS, *(w for line in CORPUS for w in line.split(" ")), " ", "\n", "\t", "  ", "<|im_start|>", "<|im_end|>", "<think>", "'s", "1234", "😀"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6))) for _ in range(5000)]
    _agree_or_refuse(kind, add_prefix_space, texts)


_TEMPLATED: dict[tuple[str, bool], tuple[Any, Tokenizer]] = {}
TEMPLATES = ["<|startoftext|> $A", "$A <|endoftext|>", "<|startoftext|> $A <|endoftext|>", "$A"]


@pytest.mark.parametrize("wrapped", [False, True])
@pytest.mark.parametrize("template", TEMPLATES)
@given(text=TEXT)
def test_the_post_processor_template_gives_the_ids_of_tokenizers(template: str, wrapped: bool, text: str) -> None:
    key = (template, wrapped)
    if key not in _TEMPLATED:
        built = train("llama3", template=template, wrapped=wrapped)
        _TEMPLATED[key] = (built, Tokenizer.from_document(json.loads(built.to_str())))
    reference, ours = _TEMPLATED[key]
    assert ours.encode(text, add_special_tokens=True) == reference.encode(text).ids
    assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids
    bos = reference.token_to_id("<|startoftext|>")
    assert ours.template_prefix == ((bos,) if template.startswith("<|startoftext|>") else ())


@pytest.mark.parametrize(
    "post",
    [
        {"type": "TemplateProcessing"},
        {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<x>", "type_id": 0}}], "pair": [], "special_tokens": {}},
        {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "B", "type_id": 0}}], "pair": [], "special_tokens": {}},
        {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}},
        {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]},
        {"type": "Sequence", "processors": [{"type": "BertProcessing"}]},
    ],
)
def test_other_post_processors_fail_to_load(post: dict[str, object]) -> None:
    _, _, document = pair("llama3")
    doc = json.loads(json.dumps(document))
    doc["post_processor"] = post
    with pytest.raises(TokenizerError, match="post_processor"):
        Tokenizer.from_document(doc)
