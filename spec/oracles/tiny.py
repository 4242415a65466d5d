"""Judges of the tiny laws, transcribed from inference.md S9 as data (never from bend.tiny).

Each table is the seed's sentence it comes from, as a mapping from what a process sees to what
it does; the laws compare the model's choice with these tables point by point.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

# S9 worker 2-4: "Same tag → use it (joined). Other tag → shutdown ... client starts a new one
# (replaced). No live socket → client starts one (started)." A worker that is closing has
# removed its socket and refuses new requests (worker 3): for a newcomer it is no live worker.
ON_PING: dict[str, str] = {"none": "start", "same": "join", "other": "replace", "closing": "start"}

# S9 worker 3: "worker removes socket, answers bye ... client starts a new one (replaced)".
# A connection that closes instead of answering bye leaves no worker to ask: start as well.
ON_SHUTDOWN: dict[str, str] = {"bye": "start", "gone": "start"}

# S9 worker 4 and 6: a started worker is checked; a worker that never came up is a crash
# reported with the log path (typed Crashed).
ON_LAUNCH: dict[str, str] = {"spawned": "check", "failed": "crashed"}

# S9 worker 4: "a live worker answers → it exits, client uses the live one": after a start the
# client pings; the same tag is used, another tag is a worker to replace (bounded rounds, then
# contended), nothing answering is a crash, a closing worker means start again. The bound on
# launches is ours (derived: the seed does not bound the rounds): 3 launches per election.
ATTEMPTS = 3
ON_CHECK: dict[str, str] = {"same": "use", "other": "replace", "none": "crashed", "closing": "start"}
ON_CHECK_EXHAUSTED: dict[str, str] = {"same": "use", "other": "contended", "none": "crashed", "closing": "contended"}

# S9 worker 4: the started worker "holds the bind lock only while checking and binding; a live
# worker answers → it exits". A socket file with nobody behind it is removed before binding.
SEAT: dict[str, str] = {"live": "exit", "stale": "clear_and_bind", "absent": "bind"}

# S9 "Roles": the role's catalog models; "translate: lfm2.5-350m before lfm2.5-230m".
ROLE_CATALOG: dict[str, tuple[str, ...]] = {
    "tiny": ("lfm2.5-230m", "lfm2.5-350m"),
    "judge": ("lfm2.5-230m", "lfm2.5-350m"),
    "translate": ("lfm2.5-350m", "lfm2.5-230m"),
    "speech": ("kokoro",),
    "dictation": ("whisper-base", "whisper-small"),
}
TEXT_ROLES: frozenset[str] = frozenset({"tiny", "judge", "translate"})  # "session provider model (text roles)"

# S9 Catalog: "Models: lfm2.5-230m, lfm2.5-350m (text, ONNX q4); whisper-base, whisper-small
# (speech to text); kokoro (Kokoro-82M, text to speech)".
CATALOG_IDS: frozenset[str] = frozenset({"lfm2.5-230m", "lfm2.5-350m", "whisper-base", "whisper-small", "kokoro"})


def first_available(chain: Iterable[str], available: frozenset[str]) -> str | None:
    """S9 roles 3, read literally: scan the chain in order, the first one available."""
    for candidate in chain:
        if candidate in available:
            return candidate
    return None


def expected_chain(role: str, primary: str | None, fallback: tuple[str, ...] | None, session: str | None) -> list[str]:
    """S9 roles 1 written out: primary, then the fallback chain, else the role's catalog models
    and (text roles) the session model; a name repeated keeps its first place."""
    names = [] if primary is None else [primary]
    if fallback is not None:
        names += list(fallback)
    else:
        names += list(ROLE_CATALOG[role])
        if role in TEXT_ROLES and session is not None:
            names.append(session)
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


# S9 worker 6: "Lines ≤ 256 MiB each side: longer request → bad_request; longer answer → out of
# protocol; bytes discarded." Read literally over a whole byte stream: every complete line (up
# to its newline) is either itself, when its length is at most the limit, or refused; a last
# line without its newline is the end of the stream (the other side died mid-line).
OVER = "over-limit"


def lines_of(stream: bytes, limit: int) -> list[bytes | str]:
    out: list[bytes | str] = []
    *complete, _partial = stream.split(b"\n")
    for line in complete:
        out.append(line if len(line) <= limit else OVER)
    return out


# S9 Translation: "Empty reply, or same letters and digits as input (case-insensitive) →
# TranslationError::Empty/TranslationError::Unchanged ... Letterless input exempt." and "One-line
# text stops at first line end"; the reply carries the prefill "<Language>:" or not.
def translation_verdict(language: str, text: str, reply: str) -> str:
    body = reply.removeprefix(f"{language}:")
    if "\n" not in text.strip("\n"):
        body = body.strip(" \t").partition("\n")[0]
    body = body.strip()
    if body == "":
        return "Empty"
    letters = [c for c in text if c.isalpha()]
    # case-insensitive as Unicode case folding has it: "SS" echoes "ß"
    if letters and "".join(c for c in body if c.isalnum()).casefold() == "".join(c for c in text if c.isalnum()).casefold():
        return "Unchanged"
    return "ok"


# The NumPy reference of the small ONNX text decoder graphs the laws and tests build (S9 engine:
# "a text decoder runner ... checked against a NumPy reference of the same graph"): logits =
# cumsum(E[input_ids], axis=1) @ W, so the next token depends on the whole prefix; variants add
# the documented optional inputs (attention_mask, position_ids, num_logits_to_keep).
def weights(vocab: int, dim: int, seed: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((vocab, dim)).astype(np.float32), rng.standard_normal((dim, vocab)).astype(np.float32)


def build(path: Path, vocab: int, dim: int, seed: int, *, optional: bool = False, keep: bool = False) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    embed, proj = weights(vocab, dim, seed)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"])]
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["h0"]),
        helper.make_node("CumSum", ["h0", "axis"], ["h1"]),
        helper.make_node("MatMul", ["h1", "W"], ["all_logits"]),
    ]
    inits = [numpy_helper.from_array(embed, "E"), numpy_helper.from_array(proj, "W"), numpy_helper.from_array(np.array(1, np.int64), "axis")]
    if optional:
        inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "seq"]))
        inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"]))
    if keep:
        inputs.append(helper.make_tensor_value_info("num_logits_to_keep", TensorProto.INT64, []))
        nodes += [
            helper.make_node("Neg", ["num_logits_to_keep"], ["neg"]),
            helper.make_node("Unsqueeze", ["neg", "zero"], ["starts"]),
            helper.make_node("Slice", ["all_logits", "starts", "big", "one"], ["logits"]),
        ]
        inits += [
            numpy_helper.from_array(np.array([0], np.int64), "zero"),
            numpy_helper.from_array(np.array([2**62], np.int64), "big"),
            numpy_helper.from_array(np.array([1], np.int64), "one"),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["all_logits"], ["logits"]))
    graph = helper.make_graph(
        nodes, "tiny-decoder", inputs, [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "kept", vocab])], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def reference_logits(ids: list[int], vocab: int, dim: int, seed: int) -> np.ndarray[Any, Any]:
    embed, proj = weights(vocab, dim, seed)
    hidden = np.cumsum(embed[np.array(ids)].astype(np.float64), axis=0)
    return np.asarray(hidden[-1] @ proj.astype(np.float64))


def reference_greedy(prompt: list[int], steps: int, vocab: int, dim: int, seed: int, end: frozenset[int] = frozenset()) -> list[int]:
    ids = list(prompt)
    out: list[int] = []
    for _ in range(steps):
        token = int(np.argmax(reference_logits(ids, vocab, dim, seed)))
        if token in end:
            break
        out.append(token)
        ids.append(token)
    return out
