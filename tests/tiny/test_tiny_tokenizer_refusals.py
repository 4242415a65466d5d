"""Each setting our tokenizer does not implement fails to load naming it (eukhe.tiny.tokenizer:
"Any other setting fails to load with TokenizerError naming it"; S9: "other settings → load
fails"): the exact text for every refusal, so a check that stopped holding (a key misspelt, a
branch inverted) cannot hide behind a later one that refuses for another reason. On a
tokenizer.json trained by `tokenizers` (tests/tiny/tokenizer_files.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from eukhe.tiny.tokenizer import Tokenizer, TokenizerError
from tests.tiny.test_tokenizer import pair


def _document(kind: str = "llama3") -> dict[str, Any]:
    _, _, document = pair(kind)
    copied = json.loads(json.dumps(document))
    assert isinstance(copied, dict)
    return copied


def _refused(doc: object) -> str:
    with pytest.raises(TokenizerError) as caught:
        Tokenizer.from_document(doc)
    return str(caught.value)


def _says(where: str, value: object) -> str:
    return f"tokenizer.json: {where} {json.dumps(value)[:200]} is not supported"


MODEL_KEYS = [
    ("dropout", 0.1),
    ("unk_token", "<unk>"),
    ("continuing_subword_prefix", "##"),
    ("end_of_word_suffix", "</w>"),
]


@pytest.mark.parametrize(("key", "value"), MODEL_KEYS, ids=[k for k, _ in MODEL_KEYS])
def test_each_bpe_option_we_lack_is_refused_by_name(key: str, value: object) -> None:
    doc = _document()
    doc["model"][key] = value
    assert _refused(doc) == _says(f"model.{key}", value)


def test_the_model_the_decoder_and_the_normalizer_are_refused_by_name() -> None:
    doc = _document()
    doc["model"]["byte_fallback"] = True
    assert _refused(doc) == "tokenizer.json: model.byte_fallback true is not supported"
    doc = _document()
    doc["model"]["type"] = "Unigram"
    assert _refused(doc) == 'tokenizer.json: model "Unigram" is not supported'
    doc["model"] = ["BPE"]
    assert _refused(doc) == 'tokenizer.json: model ["BPE"] is not supported'
    doc = _document()
    doc["decoder"] = {"type": "Metaspace"}
    assert _refused(doc) == 'tokenizer.json: decoder {"type": "Metaspace"} is not supported'
    doc["decoder"] = "ByteLevel"
    assert _refused(doc) == 'tokenizer.json: decoder "ByteLevel" is not supported'
    doc = _document()
    doc["normalizer"] = {"type": "NFC"}
    assert _refused(doc) == 'tokenizer.json: normalizer {"type": "NFC"} is not supported'
    assert _refused([]) == "tokenizer.json: not an object"
    doc = _document()
    doc["model"]["vocab"] = {"a": "1"}
    assert _refused(doc) == "tokenizer.json: model.vocab is not a map of strings to ids"


def test_a_model_of_no_type_is_bpe() -> None:
    doc = _document()
    del doc["model"]["type"]
    assert Tokenizer.from_document(doc).encode("Hello world") == Tokenizer.from_document(_document()).encode("Hello world")


@pytest.mark.parametrize(
    ("merge", "ok"),
    [("a b c", False), ("ab", False), (["a"], False), (["a", 1], False), (7, False), ("H e", True), (["H", "e"], True)],
    ids=["three", "one", "list-of-one", "not-strings", "number", "string", "list"],
)
def test_a_merge_is_two_symbols_or_refused_by_name(merge: object, ok: bool) -> None:
    doc = _document()
    doc["model"]["merges"] = [merge]
    if ok:
        Tokenizer.from_document(doc)
    else:
        assert _refused(doc) == _says("merge", merge)


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word"])
def test_an_added_token_flag_we_lack_is_refused_by_name(flag: str) -> None:
    doc = _document()
    doc["added_tokens"][0][flag] = True
    assert _refused(doc) == _says(f"added token {flag}", doc["added_tokens"][0])


@pytest.mark.parametrize(
    "change", [{"content": ""}, {"id": "0"}, {"content": None}], ids=["empty", "id-not-int", "content-not-str"]
)
def test_a_malformed_added_token_is_refused(change: dict[str, object]) -> None:
    doc = _document()
    doc["added_tokens"][0].update(change)
    assert _refused(doc) == _says("added token", doc["added_tokens"][0])


def _split(doc: dict[str, Any]) -> dict[str, Any]:
    split = doc["pre_tokenizer"]["pretokenizers"][0]
    assert isinstance(split, dict)
    return split


@pytest.mark.parametrize(
    ("key", "value"),
    [("behavior", "Removed"), ("invert", True), ("type", "Whitespace"), ("pattern", "\\s+")],
    ids=["behavior", "invert", "type", "pattern-not-object"],
)
def test_a_split_we_lack_is_refused_naming_the_split(key: str, value: object) -> None:
    doc = _document()
    _split(doc)[key] = value
    assert _refused(doc) == _says("pre_tokenizer", _split(doc))


def test_the_pre_tokenizer_sequence_is_a_split_then_a_byte_level_without_regex() -> None:
    doc = _document()
    level = doc["pre_tokenizer"]["pretokenizers"][1]
    level["use_regex"] = True
    assert _refused(doc) == _says("pre_tokenizer", level)
    del level["use_regex"]  # its default is the regex: refused the same
    assert _refused(doc) == _says("pre_tokenizer", level)
    doc = _document()
    doc["pre_tokenizer"]["pretokenizers"].append({"type": "Digits"})
    assert _refused(doc) == _says("pre_tokenizer", doc["pre_tokenizer"])
    doc = _document()
    _split(doc)["pattern"] = {"String": ""}
    assert _refused(doc) == _says("pre_tokenizer pattern", {"String": ""})
    doc["pre_tokenizer"] = {"type": "Whitespace"}
    assert _refused(doc) == _says("pre_tokenizer", {"type": "Whitespace"})
    doc["pre_tokenizer"] = None
    assert _refused(doc) == _says("pre_tokenizer", None)


def test_a_split_on_a_string_splits_there() -> None:
    doc = _document()
    _split(doc)["pattern"] = {"String": "!"}
    ours = Tokenizer.from_document(doc)
    assert ours.split is not None and ours.split.pattern == "!"


@pytest.mark.parametrize(
    ("single", "where", "value"),
    [
        ([{"SpecialToken": {"id": "<|startoftext|>", "type_id": 0}}], "post_processor template without $A", None),
        ([{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "post_processor template", {"Sequence": {"id": "A", "type_id": 0}}),
        ([{"Sequence": {"id": "B", "type_id": 0}}], "post_processor template", {"Sequence": {"id": "B", "type_id": 0}}),
        ([{"SpecialToken": {"id": "<none>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "post_processor template special token", {"SpecialToken": {"id": "<none>", "type_id": 0}}),
        (["$A"], "post_processor template", "$A"),
    ],
    ids=["no-text", "text-twice", "text-b", "unknown-special", "not-an-item"],
)
def test_a_template_we_lack_is_refused_naming_the_item(single: list[object], where: str, value: object) -> None:
    doc = _document()
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": single,
        "pair": [],
        "special_tokens": {"<|startoftext|>": {"id": "<|startoftext|>", "ids": [3], "tokens": ["<|startoftext|>"]}},
    }
    assert _refused(doc) == _says(where, single if value is None else value)


def test_a_template_with_its_specials_around_the_text_puts_them_there() -> None:
    doc = _document()
    doc["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                "pair": [],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [3, 1], "tokens": []}, "</s>": {"id": "</s>", "ids": [2], "tokens": []}},
            },
        ],
    }
    ours = Tokenizer.from_document(doc)
    plain = ours.encode("Hello")
    assert ours.encode("Hello", add_special_tokens=True) == [3, 1, *plain, 2]
    assert (ours.template_prefix, ours.template_suffix) == ((3, 1), (2,))
    doc["post_processor"] = {"type": "Sequence", "processors": {"type": "ByteLevel"}}
    assert _refused(doc) == _says("post_processor", doc["post_processor"])
    doc["post_processor"] = "ByteLevel"
    assert _refused(doc) == _says("post_processor", "ByteLevel")


@pytest.mark.parametrize("ignore_merges", [True, False], ids=["ignored", "merged"])
def test_ignore_merges_takes_a_word_of_the_vocabulary_whole_as_tokenizers_does(ignore_merges: bool) -> None:
    """``ignore_merges`` is honoured: a pre-tokenized word that is itself in the vocabulary is
    that one token, though the merges would build it of others (a vocabulary entry no merge
    reaches, so the two settings must differ); the reference is `tokenizers` on the same file."""
    from tokenizers import Tokenizer as Reference

    doc = _document()
    doc["model"]["vocab"]["Qqqq"] = max(doc["model"]["vocab"].values()) + 1
    doc["model"]["ignore_merges"] = ignore_merges
    reference = Reference.from_str(json.dumps(doc))
    ours = Tokenizer.from_document(doc)
    for text in ("Qqqq", "a Qqqq b", "Qqqqq"):
        assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids, text
    whole = [doc["model"]["vocab"]["Qqqq"]]
    assert (ours.encode("Qqqq") == whole) is ignore_merges
