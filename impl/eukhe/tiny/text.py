"""The text decoder runner on ONNX Runtime (S9 engine, the seed's eukhe-tiny-onnx text.rs),
CPU only, with our own tokenizer.

The graph's documented signature (what this runner drives):
- input ``input_ids``: int64 ``[1, sequence]``, the whole sequence so far;
- optional input ``attention_mask``: int64 ``[1, sequence]`` (all ones);
- optional input ``position_ids``: int64 ``[1, sequence]`` (0, 1, ...);
- optional input ``num_logits_to_keep``: int64 scalar, given 1 (the lfm2.5-350m graph has it);
- output ``logits``: float ``[1, kept, vocab]``; the last row scores the next token;
- optional caches (transformers.js's exports, LFM2's included): each input
  ``past_key_values.<name>`` has its output ``present.<name>``, each ``past_conv.<name>`` its
  ``present_conv.<name>``. The first run (prefill) feeds the whole prompt and empty caches (zeros;
  a symbolic batch dimension is 1, any other symbolic dimension, the past length, is 0); each
  later step feeds the one new token with the last run's present outputs as the past inputs,
  ``attention_mask`` over past and new tokens and ``position_ids`` from the past length.
Any other input, or a cache input without its present output, fails to load (``TextError``).

Generation: prefill (the prompt's tokens, the prefill text included), then greedy steps (the
highest logit; the lowest id on a tie) until an end token, a stop string (the text is cut
before it) or ``max_tokens``. Token ids out of the vocabulary are refused before they reach
the runtime (ONNX Runtime accepts them silently).

The runtime library (S9): ``providers.tinyRuntimeLibrary`` if set, else ``ORT_DYLIB_PATH``,
else ``libonnxruntime.so``; the Python onnxruntime package ships its library, so the
resolution names the file it would load and refuses a named file that does not exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eukhe import strict_json
from eukhe.tiny.tokenizer import Tokenizer

KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "position_ids", "num_logits_to_keep"})
CACHES = (("past_key_values.", "present."), ("past_conv.", "present_conv."))
DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64, "tensor(int64)": np.int64}


def present_of(name: str) -> str | None:
    """The output that carries cache input ``name`` to the next step, or None (not a cache)."""
    for past, present in CACHES:
        if name.startswith(past) and len(name) > len(past):
            return present + name[len(past) :]
    return None
DEFAULT_LIBRARY = "libonnxruntime.so"


class TextError(Exception):
    """A graph or request the runner cannot run."""


def runtime_library(setting: str | None, env: Mapping[str, str] | None = None) -> str:
    """S9: providers.tinyRuntimeLibrary, else ORT_DYLIB_PATH, else libonnxruntime.so."""
    env = os.environ if env is None else env
    for source, value in (("providers.tinyRuntimeLibrary", setting), ("ORT_DYLIB_PATH", env.get("ORT_DYLIB_PATH"))):
        if value:
            if not Path(value).exists():
                raise TextError(f"{source} names {value}, which does not exist")
            return value
    return DEFAULT_LIBRARY


@dataclass(frozen=True)
class Generated:
    ids: tuple[int, ...]
    text: str
    stopped: str  # "end", "stop", "max_tokens"


class TextRunner:
    def __init__(self, graph: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own exception types
            raise TextError(f"{graph}: cannot load: {error}") from error
        inputs = {i.name: i for i in self.session.get_inputs()}
        outputs = {o.name for o in self.session.get_outputs()}
        self.cache = {name: present for name in inputs if (present := present_of(name)) is not None}
        unknown = sorted(set(inputs) - KNOWN_INPUTS - set(self.cache))
        if "input_ids" not in inputs or unknown:
            raise TextError(f"{graph}: inputs {sorted(inputs)} are not the documented signature (unknown: {unknown})")
        if "logits" not in outputs:
            raise TextError(f"{graph}: no logits output")
        lacking = sorted(p for p in self.cache.values() if p not in outputs)
        if lacking:
            raise TextError(f"{graph}: cache outputs {lacking} are missing")
        self.empty: dict[str, np.ndarray[Any, Any]] = {}
        for name in self.cache:
            spec = inputs[name]
            if spec.type not in DTYPES:
                raise TextError(f"{graph}: cache input {name} has type {spec.type}")
            shape = [d if isinstance(d, int) else (1 if axis == 0 else 0) for axis, d in enumerate(spec.shape)]
            self.empty[name] = np.zeros(shape, dtype=DTYPES[spec.type])
        self.inputs = frozenset(inputs)
        shape = next(o.shape for o in self.session.get_outputs() if o.name == "logits")
        self.vocab = shape[-1] if isinstance(shape[-1], int) else None

    def logits(self, ids: list[int]) -> np.ndarray[Any, Any]:
        """The next-token scores after ``ids`` (one run over all of them, caches empty)."""
        return self.step(ids, 0, self.empty)[0]

    def step(self, ids: list[int], past: int, cache: dict[str, np.ndarray[Any, Any]]) -> tuple[np.ndarray[Any, Any], dict[str, np.ndarray[Any, Any]]]:
        """Run ``ids`` after ``past`` tokens whose caches are ``cache``: the next-token scores
        and the caches after ``ids`` (empty for a graph without caches)."""
        if not ids:
            raise TextError("no tokens to run")
        if self.vocab is not None and any(not 0 <= i < self.vocab for i in ids):
            raise TextError(f"token id out of the vocabulary of {self.vocab}")
        array = np.array([ids], dtype=np.int64)
        feed: dict[str, Any] = {"input_ids": array, **cache}
        if "attention_mask" in self.inputs:
            feed["attention_mask"] = np.ones((1, past + len(ids)), dtype=np.int64)
        if "position_ids" in self.inputs:
            feed["position_ids"] = np.arange(past, past + len(ids), dtype=np.int64)[None, :]
        if "num_logits_to_keep" in self.inputs:
            feed["num_logits_to_keep"] = np.array(1, dtype=np.int64)
        names = ["logits", *self.cache.values()]
        out, *presents = self.session.run(names, feed)
        return np.asarray(out[0, -1, :]), dict(zip(self.cache, presents))

    def generate(
        self,
        prompt: list[int],
        *,
        max_tokens: int,
        end_ids: frozenset[int] = frozenset(),
        stop: tuple[str, ...] = (),
        tokenizer: Tokenizer | None = None,
    ) -> Generated:
        ids = list(prompt)
        new: list[int] = []
        cache: dict[str, np.ndarray[Any, Any]] | None = None
        for _ in range(max_tokens):
            if not self.cache:
                scores = self.logits(ids)
            elif cache is None:  # prefill: the whole prompt, caches empty
                scores, cache = self.step(ids, 0, self.empty)
            else:  # one new token after the cached ones
                scores, cache = self.step(ids[-1:], len(ids) - 1, cache)
            token = int(np.argmax(scores))  # the first maximum: the lowest id on a tie
            if token in end_ids:
                return Generated(tuple(new), _text(tokenizer, new), "end")
            new.append(token)
            ids.append(token)
            if stop and tokenizer is not None:
                text = tokenizer.decode(new)
                cut = min((text.find(s) for s in stop if s and s in text), default=-1)
                if cut >= 0:
                    return Generated(tuple(new), text[:cut], "stop")
        return Generated(tuple(new), _text(tokenizer, new), "max_tokens")


def _text(tokenizer: Tokenizer | None, ids: list[int]) -> str:
    return "" if tokenizer is None else tokenizer.decode(ids)


def chatml(messages: list[dict[str, Any]], prefill: str) -> str:
    """The prompt's text: ChatML turns (the LFM2 template), the assistant turn opened and
    prefilled (the BOS is ids before it: ``bos_ids``)."""
    turns = "".join(f"<|im_start|>{m.get('role', 'user')}\n{m.get('content', '')}<|im_end|>\n" for m in messages)
    return f"{turns}<|im_start|>assistant\n{prefill}"


def bos_ids(model_dir: Path, tokenizer: Tokenizer) -> tuple[int, ...]:
    """The ids a prompt begins with (the model's BOS), per its tokenizer config:
    ``tokenizer_config.json``'s ``add_bos_token``, when it says true or false, with its
    ``bos_token`` (a string, or an added token's ``{"content": ...}``), which must be a token of
    the tokenizer; else the special tokens the post-processor's template puts before the text
    (``tokenizer.json``); else none. Only what comes before the text: a template's tokens after
    it (an EOS) would end the prompt."""
    config_file = model_dir / "tokenizer_config.json"
    if config_file.is_file():
        try:
            config = strict_json.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TextError(f"{config_file}: cannot read: {error}") from error
        if not isinstance(config, dict):
            raise TextError(f"{config_file}: not an object")
        add = config.get("add_bos_token")
        if add is False:
            return ()
        if add is True:
            token = config.get("bos_token")
            content = token.get("content") if isinstance(token, dict) else token
            found = tokenizer.token_id(content) if isinstance(content, str) else None
            if found is None:
                raise TextError(f"{config_file}: add_bos_token is true but bos_token {strict_json.dumps(token)} is not a token of the tokenizer")
            return (found,)
        if add is not None:
            raise TextError(f"{config_file}: add_bos_token {strict_json.dumps(add)} is not true or false")
    return tokenizer.template_prefix


class TextEngine:
    """A worker engine: the graph (``model.onnx``, or the catalog's ``onnx/<name>.onnx``),
    tokenizer.json, tokenizer_config.json (when present: the BOS, ``bos_ids``) and engine.json
    (end tokens) in a dir."""

    def __init__(self, runner: TextRunner, tokenizer: Tokenizer, end: frozenset[int], bos: tuple[int, ...]) -> None:
        self.runner = runner
        self.tokenizer = tokenizer
        self.end = end
        self.bos = bos

    @classmethod
    def load(cls, model_dir: Path) -> TextEngine:
        spec = strict_json.loads((model_dir / "engine.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(model_dir / "tokenizer.json")
        end = frozenset(i for t in spec.get("end_tokens", ["<|im_end|>"]) if (i := tokenizer.token_id(t)) is not None)
        bos = bos_ids(model_dir, tokenizer)
        graphs = [model_dir / "model.onnx", *sorted((model_dir / "onnx").glob("*.onnx"))]
        graph = next((g for g in graphs if g.is_file()), None)
        if graph is None:
            raise TextError(f"{model_dir}: no graph (model.onnx, or onnx/*.onnx as the catalog installs it)")
        return cls(TextRunner(graph), tokenizer, end, bos)

    def prompt(self, messages: list[dict[str, Any]], prefill: str) -> list[int]:
        """The prompt's ids: the model's BOS (``bos_ids``), then the ChatML turns and the prefill."""
        return [*self.bos, *self.tokenizer.encode(chatml(messages, prefill))]

    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        out = self.runner.generate(self.prompt(messages, prefill), max_tokens=max_tokens, end_ids=self.end, stop=tuple(stop), tokenizer=self.tokenizer)
        return prefill + out.text
