"""Our own tokenizer (S9 engine, the seed's tokenizer.rs): byte-level BPE read from a Hugging
Face ``tokenizer.json``, with its added tokens, its pre-tokenizer regex and its ranked merges.

What loads: no normalizer; a pre-tokenizer that is ``ByteLevel`` (its GPT-2 regex or none) or
a ``Sequence`` of ``Split`` (a regex or a string, behavior Isolated, not inverted) and
``ByteLevel`` without its regex, either with ``add_prefix_space`` on or off; a ``BPE`` model
without dropout, unknown token, subword prefix or suffix, or byte fallback (``ignore_merges`` is
honoured); added tokens without lstrip, rstrip or single_word; a ``ByteLevel`` decoder (or
none); a post-processor that is none, ``ByteLevel``, ``TemplateProcessing`` (its single
template: special tokens around one ``$A``) or a ``Sequence`` of those. Any other setting fails
to load with ``TokenizerError`` naming it.

Encoding (``encode``): the text is cut at added tokens (leftmost, longest first); each other
piece is split by the pre-tokenizer regex; ``add_prefix_space`` puts a space before each piece
that reaches the ``ByteLevel`` and does not start with one, as `tokenizers` does: before each
piece between added tokens when the ``ByteLevel`` splits with its own regex (the space comes
before that split), before each split of the ``Split`` in a ``Sequence``; each split's UTF-8
bytes are mapped to the byte-level alphabet, and merged by rank. With ``add_special_tokens``,
the template's special tokens go around the ids (``template_prefix`` are those before the
text: a model's BOS). Decoding maps tokens back to bytes (a token with a character outside the
alphabet gives its own UTF-8 bytes) and reads them as UTF-8, replacing invalid sequences.

The pre-tokenizer regex runs on the ``regex`` module, whose Unicode version (17 here) can be
newer than the one `tokenizers` was built with (its Oniguruma: 16): code points assigned only in
the newer one are letters or numbers to us and unassigned to it, so text holding them may split
differently. Everywhere else the ids are `tokenizers`' (the differential tests).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

from eukhe import strict_json

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class TokenizerError(Exception):
    """A tokenizer.json this tokenizer does not implement, or one that is malformed."""


def bytes_to_unicode() -> dict[int, str]:
    """The byte-level alphabet: printable bytes stand for themselves, the others are shifted
    past 255 (GPT-2's table)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table: dict[int, str] = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}


def _refuse(where: str, value: object) -> TokenizerError:
    return TokenizerError(f"tokenizer.json: {where} {json.dumps(value)[:200]} is not supported")


class Tokenizer:
    def __init__(
        self,
        vocab: dict[str, int],
        merges: list[tuple[str, str]],
        added: list[tuple[int, str, bool]],
        split: regex.Pattern[str] | None,
        add_prefix_space: bool,
        ignore_merges: bool,
        template: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
        prefix_each_split: bool = False,
    ) -> None:
        self.vocab = vocab
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.added = {content: token_id for token_id, content, _ in added}
        self.special = {token_id for token_id, _, special in added if special}
        self.id_to_token = {token_id: token for token, token_id in vocab.items()}
        for token_id, content, _ in added:
            self.id_to_token[token_id] = content
        self.split = split
        self.add_prefix_space = add_prefix_space
        self.prefix_each_split = prefix_each_split  # Split, then ByteLevel: the space goes before each split
        self.ignore_merges = ignore_merges
        self.template_prefix, self.template_suffix = template
        longest_first = sorted(self.added, key=lambda t: (-len(t), t))
        self.added_pattern = regex.compile("|".join(regex.escape(t) for t in longest_first)) if longest_first else None
        self._word = lru_cache(maxsize=65536)(self._bpe)

    # -- loading ----------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: Path) -> Tokenizer:
        try:
            document = strict_json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TokenizerError(f"{path}: cannot read: {error}") from error
        return cls.from_document(document)

    @classmethod
    def from_document(cls, doc: Any) -> Tokenizer:
        if not isinstance(doc, dict):
            raise TokenizerError("tokenizer.json: not an object")
        if doc.get("normalizer") is not None:
            raise _refuse("normalizer", doc["normalizer"])
        split, prefix, each = _pre_tokenizer(doc.get("pre_tokenizer"))
        decoder = doc.get("decoder")
        if decoder is not None and (not isinstance(decoder, dict) or decoder.get("type") != "ByteLevel"):
            raise _refuse("decoder", decoder)
        template = _post_processor(doc.get("post_processor"))
        model = doc.get("model")
        if not isinstance(model, dict) or model.get("type", "BPE") != "BPE":
            raise _refuse("model", model if not isinstance(model, dict) else model.get("type"))
        for key in ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key) is not None:
                raise _refuse(f"model.{key}", model[key])
        if model.get("byte_fallback"):
            raise _refuse("model.byte_fallback", True)
        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
            raise TokenizerError("tokenizer.json: model.vocab is not a map of strings to ids")
        merges: list[tuple[str, str]] = []
        for merge in model.get("merges", []):
            if isinstance(merge, str) and merge.count(" ") == 1:
                a, b = merge.split(" ")
            elif isinstance(merge, list) and len(merge) == 2 and all(isinstance(x, str) for x in merge):
                a, b = merge
            else:
                raise _refuse("merge", merge)
            merges.append((a, b))
        added: list[tuple[int, str, bool]] = []
        for token in doc.get("added_tokens") or []:
            if not isinstance(token, dict) or not isinstance(token.get("id"), int) or not isinstance(token.get("content"), str):
                raise _refuse("added token", token)
            for flag in ("lstrip", "rstrip", "single_word"):
                if token.get(flag):
                    raise _refuse(f"added token {flag}", token)
            if not token["content"]:
                raise _refuse("added token", token)
            added.append((token["id"], token["content"], bool(token.get("special"))))
        return cls(vocab, merges, added, split, prefix, bool(model.get("ignore_merges")), template, each)

    # -- encoding ---------------------------------------------------------------------
    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        ids: list[int] = list(self.template_prefix) if add_special_tokens else []
        for piece, added_id in self._cut(text):
            if added_id is not None:
                ids.append(added_id)
                continue
            if self.add_prefix_space and not self.prefix_each_split and not piece.startswith(" "):
                piece = " " + piece
            for word in self._pre(piece):
                if self.add_prefix_space and self.prefix_each_split and not word.startswith(" "):
                    word = " " + word
                ids.extend(self._word("".join(BYTE_CHAR[b] for b in word.encode("utf-8"))))
        if add_special_tokens:
            ids.extend(self.template_suffix)
        return ids

    def _cut(self, text: str) -> list[tuple[str, int | None]]:
        if self.added_pattern is None:
            return [(text, None)] if text else []
        pieces: list[tuple[str, int | None]] = []
        at = 0
        for match in self.added_pattern.finditer(text):
            if match.start() > at:
                pieces.append((text[at : match.start()], None))
            pieces.append((match.group(), self.added[match.group()]))
            at = match.end()
        if at < len(text):
            pieces.append((text[at:], None))
        return pieces

    def _pre(self, piece: str) -> list[str]:
        if self.split is None:
            return [piece]
        words: list[str] = []
        at = 0
        for match in self.split.finditer(piece):
            if match.start() > at:
                words.append(piece[at : match.start()])
            if match.end() > match.start():
                words.append(match.group())
            at = match.end()
        if at < len(piece):
            words.append(piece[at:])
        return words

    def _bpe(self, word: str) -> tuple[int, ...]:
        if self.ignore_merges and word in self.vocab:
            return (self.vocab[word],)
        symbols = [c for c in word if c in self.vocab]
        ranks = self.ranks
        while len(symbols) > 1:
            best = None
            best_rank = -1
            for i in range(len(symbols) - 1):
                rank = ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and (best is None or rank < best_rank):
                    best, best_rank = i, rank
            if best is None:
                break
            pair = (symbols[best], symbols[best + 1])
            merged: list[str] = []
            i = 0
            while i < len(symbols):
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == pair:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return tuple(self.vocab[s] for s in symbols if s in self.vocab)

    # -- decoding ---------------------------------------------------------------------
    def decode(self, ids: list[int], *, skip_special: bool = True) -> str:
        out = bytearray()
        for token_id in ids:
            if skip_special and token_id in self.special:
                continue
            token = self.id_to_token.get(token_id)
            if token is None:
                continue
            try:
                out += bytes(CHAR_BYTE[c] for c in token)
            except KeyError:
                out += token.encode("utf-8")
        return out.decode("utf-8", "replace")

    def token_id(self, token: str) -> int | None:
        return self.added.get(token, self.vocab.get(token))


def _post_processor(post: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids a post-processor puts before and after the text of one sequence."""
    if post is None:
        return (), ()
    if not isinstance(post, dict):
        raise _refuse("post_processor", post)
    if post.get("type") == "ByteLevel":  # offsets only
        return (), ()
    if post.get("type") == "Sequence":
        parts = post.get("processors")
        if not isinstance(parts, list):
            raise _refuse("post_processor", post)
        before: tuple[int, ...] = ()
        after: tuple[int, ...] = ()
        for part in parts:
            more_before, more_after = _post_processor(part)
            before, after = more_before + before, after + more_after
        return before, after
    if post.get("type") == "TemplateProcessing":
        return _template(post)
    raise _refuse("post_processor", post)


def _template(post: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """TemplateProcessing's single template: special tokens, one ``$A``, special tokens."""
    single, specials = post.get("single"), post.get("special_tokens")
    if not isinstance(single, list) or not isinstance(specials, dict):
        raise _refuse("post_processor", post)
    sides: tuple[list[int], list[int]] = ([], [])
    seen_text = False
    for item in single:
        if isinstance(item, dict) and set(item) == {"Sequence"} and isinstance(item["Sequence"], dict):
            if item["Sequence"].get("id") != "A" or seen_text:
                raise _refuse("post_processor template", item)
            seen_text = True
            continue
        if isinstance(item, dict) and set(item) == {"SpecialToken"} and isinstance(item["SpecialToken"], dict):
            token = specials.get(item["SpecialToken"].get("id"))
            ids = token.get("ids") if isinstance(token, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
                raise _refuse("post_processor template special token", item)
            sides[seen_text].extend(ids)
            continue
        raise _refuse("post_processor template", item)
    if not seen_text:
        raise _refuse("post_processor template without $A", single)
    return tuple(sides[0]), tuple(sides[1])


def _pre_tokenizer(pre: Any) -> tuple[regex.Pattern[str] | None, bool, bool]:
    """The split regex (None: no split), whether a prefix space is added, and whether it is
    added before each split (a ``Split`` before the ``ByteLevel``) rather than each piece."""
    if not isinstance(pre, dict):
        raise _refuse("pre_tokenizer", pre)
    if pre.get("type") == "ByteLevel":
        return (regex.compile(GPT2_PATTERN) if pre.get("use_regex", True) else None), bool(pre.get("add_prefix_space")), False
    if pre.get("type") == "Sequence":
        parts = pre.get("pretokenizers")
        if not isinstance(parts, list) or len(parts) != 2:
            raise _refuse("pre_tokenizer", pre)
        split, level = parts
        if not isinstance(level, dict) or level.get("type") != "ByteLevel" or level.get("use_regex", True):
            raise _refuse("pre_tokenizer", level)
        if (
            not isinstance(split, dict)
            or split.get("type") != "Split"
            or split.get("behavior") != "Isolated"
            or split.get("invert")
            or not isinstance(split.get("pattern"), dict)
        ):
            raise _refuse("pre_tokenizer", split)
        pattern = split["pattern"]
        if isinstance(pattern.get("Regex"), str):
            compiled = regex.compile(pattern["Regex"])
        elif isinstance(pattern.get("String"), str) and pattern["String"]:
            compiled = regex.compile(regex.escape(pattern["String"]))
        else:
            raise _refuse("pre_tokenizer pattern", pattern)
        return compiled, bool(level.get("add_prefix_space")), True
    raise _refuse("pre_tokenizer", pre)
