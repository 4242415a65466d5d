"""Our byte-level BPE against `tokenizers`, id for id, on tokenizer files `tokenizers` trains
here (the seed's tokenizer::tests: ids/text vs the ids Hugging Face tokenizers gives for the
same files and texts; random text round-trips)."""

from __future__ import annotations

import json
from pathlib import Path

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
TEXT = st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=0x3FF)), ADVERSARIAL, st.sampled_from(CORPUS))


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
