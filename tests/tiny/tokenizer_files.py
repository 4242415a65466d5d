"""tokenizer.json files trained by `tokenizers` in the tests (nothing downloads)."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CORPUS = [
    "Hello world! This is a small corpus for a byte-level BPE tokenizer.",
    "Translate from English to German.\nEnglish: good morning\nGerman: Guten Morgen",
    "Où est la gare ? ¿Dónde está la estación? Привет, мир. 你好，世界。 こんにちは",
    "def f(x):\n    return x * 2  # doubled\n\n\tindent\ttabs   and   spaces",
    "numbers 1234567 3.14159 2026-11-30 0xFF 1e-9 ½ ² ٣",
    "emoji 😀🚀👍🏽 and combining é e\u0301 and zero\u200bwidth",
    "<|im_start|>user\nwhat's up? I'm fine, you'll see, we'd go.<|im_end|>",
]


SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|startoftext|>"]


def train(kind: str, vocab_size: int = 600, *, add_prefix_space: bool = False, template: str | None = None, wrapped: bool = False) -> Tokenizer:
    """A byte-level BPE tokenizer trained on CORPUS: ``kind`` gpt2 (ByteLevel with its regex) or
    llama3 (Split, then ByteLevel without its regex), the ByteLevel's ``add_prefix_space``, and
    a post-processor ``template`` (TemplateProcessing's single, e.g. ``"<|startoftext|> $A"``;
    ``wrapped``: in a Sequence after a ByteLevel post-processor, as Llama 3 has it)."""
    tok = Tokenizer(models.BPE())
    if kind == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 20, trainer)
    tok.add_tokens(["<think>", "</think>"])
    if kind == "llama3-ignore-merges":
        doc = json.loads(tok.to_str())
        doc["model"]["ignore_merges"] = True
        tok = Tokenizer.from_str(json.dumps(doc))
    if template is not None:
        names = [t for t in SPECIALS if t in template]
        post = processors.TemplateProcessing(single=template, special_tokens=[(t, tok.token_to_id(t)) for t in names])
        tok.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), post]) if wrapped else post
    return tok


def write(tok: Tokenizer, where: Path) -> Path:
    path = where / "tokenizer.json"
    tok.save(str(path))
    return path
