"""Judges of the tiny laws, transcribed from inference.md S9 as data (never from bend.tiny).

Each table is the seed's sentence it comes from, as a mapping from what a process sees to what
it does; the laws compare the model's choice with these tables point by point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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


# ---------------------------------------------------------------------------------- audio
# Whisper's input features, written out from Whisper's audio.py and librosa's filters.mel
# (htk=False, norm="slaney") as loops and an explicit DFT matrix, independently of the
# production code's vectorised version: 16 kHz, 30 s (480000 samples, zero padded), n_fft 400,
# hop 160, periodic Hann window, centred with reflect padding, last frame dropped, power
# spectrum, mel filters, log10 clamped at 1e-10, floor at max - 8, then (x + 4) / 4.
WHISPER_RATE = 16000
WHISPER_SAMPLES = 480000


def slaney_hz_to_mel(f: float) -> float:
    import math

    if f < 1000.0:
        return 3.0 * f / 200.0
    return 15.0 + math.log(f / 1000.0) / (math.log(6.4) / 27.0)


def slaney_mel_to_hz(m: float) -> float:
    import math

    if m < 15.0:
        return 200.0 * m / 3.0
    return 1000.0 * math.exp((m - 15.0) * math.log(6.4) / 27.0)


def reference_mel_filters(n_mels: int, rate: int = WHISPER_RATE, n_fft: int = 400) -> np.ndarray[Any, Any]:
    bins = n_fft // 2 + 1
    top = slaney_hz_to_mel(rate / 2)
    edges = [slaney_mel_to_hz(top * i / (n_mels + 1)) for i in range(n_mels + 2)]
    out = np.zeros((n_mels, bins))
    for band in range(n_mels):
        left, centre, right = edges[band], edges[band + 1], edges[band + 2]
        for k in range(bins):
            f = k * rate / n_fft
            rising = (f - left) / (centre - left)
            falling = (right - f) / (right - centre)
            out[band, k] = max(0.0, min(rising, falling)) * 2.0 / (right - left)
    return out


def reference_log_mel(samples: np.ndarray[Any, Any], n_mels: int = 80) -> np.ndarray[Any, Any]:
    import math

    n_fft, hop = 400, 160
    audio = np.zeros(WHISPER_SAMPLES)
    chunk = np.asarray(samples, dtype=np.float64)[:WHISPER_SAMPLES]
    audio[: len(chunk)] = chunk
    half = n_fft // 2
    # reflect padding: index -i is i, index n-1+i is n-1-i
    padded = np.concatenate([audio[1 : half + 1][::-1], audio, audio[-half - 1 : -1][::-1]])
    window = np.array([0.5 - 0.5 * math.cos(2 * math.pi * n / n_fft) for n in range(n_fft)])
    k = np.arange(n_fft // 2 + 1)[:, None]
    n = np.arange(n_fft)[None, :]
    cos, sin = np.cos(2 * np.pi * k * n / n_fft), np.sin(2 * np.pi * k * n / n_fft)
    frames = WHISPER_SAMPLES // hop  # 3001 centred frames, the last one dropped
    power = np.empty((n_fft // 2 + 1, frames))
    for t in range(frames):
        x = padded[t * hop : t * hop + n_fft] * window
        power[:, t] = (cos @ x) ** 2 + (sin @ x) ** 2
    mel = reference_mel_filters(n_mels) @ power
    log = np.log10(np.maximum(mel, 1e-10))
    log = np.maximum(log, log.max() - 8.0)
    return np.asarray((log + 4.0) / 4.0)


# A small whisper-style pair of graphs of the documented signature, and its NumPy reference:
# encoder: last_hidden_state = tanh(transpose(input_features) @ A); decoder: with
# c = cumsum(E[input_ids]) and p its last feature (E's last column is all ones: the position),
# logits = (c / p + mean over frames of encoder_hidden_states) @ W + p * U, U zero but for
# <|endoftext|> (``eot``): the other logits stay bounded, eot's grows along the sequence and
# ends the run.
def whisper_weights(n_mels: int, dim: int, vocab: int, eot: int, seed: int) -> tuple[np.ndarray[Any, Any], ...]:
    rng = np.random.default_rng(seed)
    enc = (rng.standard_normal((n_mels, dim)) * 0.3).astype(np.float32)
    embed = rng.standard_normal((vocab, dim)).astype(np.float32)
    embed[:, -1] = 1.0
    proj = rng.standard_normal((dim, vocab)).astype(np.float32)
    grow = np.zeros(vocab, np.float32)
    grow[eot] = 0.3
    return enc, embed, proj, grow


def _save(model: Any, path: Path) -> Path:
    import onnx

    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def build_whisper(where: Path, n_mels: int, dim: int, vocab: int, eot: int, seed: int) -> tuple[Path, Path]:
    from onnx import TensorProto, helper, numpy_helper

    enc, embed, proj, grow = whisper_weights(n_mels, dim, vocab, eot, seed)
    where.mkdir(parents=True, exist_ok=True)
    opset = [helper.make_opsetid("", 17)]
    encoder = helper.make_graph(
        [
            helper.make_node("Transpose", ["input_features"], ["t"], perm=[0, 2, 1]),
            helper.make_node("MatMul", ["t", "A"], ["m"]),
            helper.make_node("Tanh", ["m"], ["last_hidden_state"]),
        ],
        "tiny-whisper-encoder",
        [helper.make_tensor_value_info("input_features", TensorProto.FLOAT, [1, n_mels, 3000])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, 3000, dim])],
        [numpy_helper.from_array(enc, "A")],
    )
    decoder = helper.make_graph(
        [
            helper.make_node("Gather", ["E", "input_ids"], ["h0"]),
            helper.make_node("CumSum", ["h0", "axis"], ["h1"]),
            helper.make_node("Slice", ["h1", "last", "end", "two"], ["pos"]),
            helper.make_node("Div", ["h1", "pos"], ["mean"]),
            helper.make_node("ReduceMean", ["encoder_hidden_states"], ["ctx"], axes=[1], keepdims=1),
            helper.make_node("Add", ["mean", "ctx"], ["h2"]),
            helper.make_node("MatMul", ["h2", "W"], ["l0"]),
            helper.make_node("Mul", ["pos", "U"], ["l1"]),
            helper.make_node("Add", ["l0", "l1"], ["logits"]),
        ],
        "tiny-whisper-decoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
            helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT, [1, "frames", dim]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "seq", vocab])],
        [
            numpy_helper.from_array(embed, "E"),
            numpy_helper.from_array(proj, "W"),
            numpy_helper.from_array(grow, "U"),
            numpy_helper.from_array(np.array(1, np.int64), "axis"),
            numpy_helper.from_array(np.array([dim - 1], np.int64), "last"),
            numpy_helper.from_array(np.array([dim], np.int64), "end"),
            numpy_helper.from_array(np.array([2], np.int64), "two"),
        ],
    )
    (where / "onnx").mkdir(exist_ok=True)
    return (
        _save(helper.make_model(encoder, opset_imports=opset), where / "onnx" / "encoder_model.onnx"),
        _save(helper.make_model(decoder, opset_imports=opset), where / "onnx" / "decoder_model.onnx"),
    )


def reference_whisper(features: np.ndarray[Any, Any], prompt: list[int], n_mels: int, dim: int, vocab: int, eot: int, seed: int, limit: int = 448) -> list[int]:
    enc, embed, proj, grow = (w.astype(np.float64) for w in whisper_weights(n_mels, dim, vocab, eot, seed))
    hidden = np.tanh(features.astype(np.float64).T @ enc)  # [frames, dim]
    ctx = hidden.mean(axis=0)
    ids, out = list(prompt), []
    while len(ids) < limit:
        total = embed[ids].sum(axis=0)
        position = total[-1]
        token = int(np.argmax((total / position + ctx) @ proj + position * grow))
        if token == eot:
            break
        out.append(token)
        ids.append(token)
    return out


# Whisper-like special tokens after the 256 byte-level tokens of a decoding vocabulary.
WHISPER_SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|de|>", "<|transcribe|>", "<|notimestamps|>")


def whisper_tokenizer_document() -> dict[str, Any]:
    """A tokenizer.json as Whisper's exports lay it out (a TemplateProcessing post-processor,
    which decoding does not need): the 256 byte-level tokens, then the special tokens."""
    alphabet = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in alphabet}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    vocab = {chars[b]: b for b in range(256)}
    added = [{"id": 256 + i, "content": t, "special": True} for i, t in enumerate(WHISPER_SPECIALS)]
    return {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }


def reference_bytes_text(ids: list[int]) -> str:
    """What the decoding vocabulary above gives for ``ids``: id b < 256 is byte b; specials vanish."""
    return bytes(i for i in ids if i < 256).decode("utf-8", "replace").strip()


# A small kokoro-style graph of the documented signature and its NumPy reference:
# waveform = reshape(tanh((E[input_ids] + style @ P) * speed), [1, -1]).
KOKORO_VOCAB = 178
KOKORO_WIDTH = 6


def kokoro_weights(seed: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((KOKORO_VOCAB, KOKORO_WIDTH)).astype(np.float32), (rng.standard_normal((256, KOKORO_WIDTH)) * 0.1).astype(np.float32)


def build_kokoro(path: Path, seed: int) -> Path:
    from onnx import TensorProto, helper, numpy_helper

    embed, proj = kokoro_weights(seed)
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["E", "input_ids"], ["h"]),
            helper.make_node("MatMul", ["style", "P"], ["s"]),
            helper.make_node("Unsqueeze", ["s", "one"], ["s3"]),
            helper.make_node("Add", ["h", "s3"], ["a"]),
            helper.make_node("Mul", ["a", "speed"], ["b"]),
            helper.make_node("Tanh", ["b"], ["c"]),
            helper.make_node("Reshape", ["c", "flat"], ["waveform"]),
        ],
        "tiny-kokoro",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
            helper.make_tensor_value_info("style", TensorProto.FLOAT, [1, 256]),
            helper.make_tensor_value_info("speed", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("waveform", TensorProto.FLOAT, [1, "samples"])],
        [
            numpy_helper.from_array(embed, "E"),
            numpy_helper.from_array(proj, "P"),
            numpy_helper.from_array(np.array([1], np.int64), "one"),
            numpy_helper.from_array(np.array([1, -1], np.int64), "flat"),
        ],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def reference_kokoro(ids: list[int], style: np.ndarray[Any, Any], speed: float, seed: int) -> np.ndarray[Any, Any]:
    """The waveform of one piece: ``ids`` framed by the pad 0, ``style`` its row of 256."""
    embed, proj = (w.astype(np.float64) for w in kokoro_weights(seed))
    framed = [0, *ids, 0]
    return np.tanh((embed[framed] + style.astype(np.float64) @ proj) * speed).reshape(-1)


# A small text decoder graph WITH caches, of the documented cache signature (inputs
# ``past_key_values.<i>.key``/``.value`` [1, past, dim] and ``past_conv.<i>`` [1, dim], outputs
# ``present.<i>.key``/``.value`` and ``present_conv.<i>``), computing the same logits as
# ``build``'s cumsum(E[ids]) @ W when the caches are carried right: present key and value are
# past + the new rows (their prefix sums, last ``seq`` rows, are the new positions' sums); the
# conv state is the running total (past total + prefix sums of the new rows); the logits are
# the mean of the three @ W, plus (sum(attention_mask) / (past + seq) - 1) * V1 and
# (max(position_ids) + 1 - (past + seq)) * V2 (V1, V2 random over the vocabulary): zero shifts
# when the mask and the positions are right, a changed ranking when they are not.
def build_cached(path: Path, vocab: int, dim: int, seed: int) -> Path:
    from onnx import TensorProto, helper, numpy_helper

    embed, proj = weights(vocab, dim, seed)
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["h0"]),
        helper.make_node("CumSum", ["h0", "axis"], ["new_sums"]),
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Gather", ["ids_shape", "one_scalar"], ["seq"]),
        helper.make_node("Neg", ["seq"], ["neg_seq"]),
        helper.make_node("Unsqueeze", ["neg_seq", "zero"], ["starts"]),
        helper.make_node("ReduceSum", ["h0", "one"], ["added"], keepdims=0),
        helper.make_node("Add", ["past_conv.0", "added"], ["present_conv.0"]),
        helper.make_node("Unsqueeze", ["past_conv.0", "one"], ["conv3"]),
        helper.make_node("Add", ["conv3", "new_sums"], ["via_conv"]),
    ]
    for part in ("key", "value"):
        nodes += [
            helper.make_node("Concat", [f"past_key_values.0.{part}", "h0"], [f"present.0.{part}"], axis=1),
            helper.make_node("CumSum", [f"present.0.{part}", "axis"], [f"{part}_sums"]),
            helper.make_node("Slice", [f"{part}_sums", "starts", "big", "one"], [f"via_{part}"]),
        ]
    nodes += [
        helper.make_node("Shape", ["present.0.key"], ["k_shape"]),
        helper.make_node("Gather", ["k_shape", "one_scalar"], ["total_i"]),
        helper.make_node("Cast", ["total_i"], ["total"], to=f),
        helper.make_node("ReduceSum", ["attention_mask"], ["mask_sum_i"], keepdims=0),
        helper.make_node("Cast", ["mask_sum_i"], ["mask_sum"], to=f),
        helper.make_node("Div", ["mask_sum", "total"], ["ratio"]),
        helper.make_node("ReduceMax", ["position_ids"], ["pos_max_i"], keepdims=0),
        helper.make_node("Cast", ["pos_max_i"], ["pos_max"], to=f),
        helper.make_node("Add", ["pos_max", "one_f"], ["pos_next"]),
        helper.make_node("Sub", ["pos_next", "total"], ["pos_err"]),
        helper.make_node("Sum", ["via_conv", "via_key", "via_value"], ["three"]),
        helper.make_node("Div", ["three", "three_f"], ["mean"]),
        helper.make_node("MatMul", ["mean", "W"], ["raw"]),
        helper.make_node("Sub", ["ratio", "one_f"], ["mask_err"]),
        helper.make_node("Mul", ["mask_err", "V1"], ["mask_shift"]),
        helper.make_node("Mul", ["pos_err", "V2"], ["pos_shift"]),
        helper.make_node("Sum", ["raw", "mask_shift", "pos_shift"], ["logits"]),
    ]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"]),
        helper.make_tensor_value_info("past_key_values.0.key", f, ["batch", "past", dim]),
        helper.make_tensor_value_info("past_key_values.0.value", f, ["batch", "past", dim]),
        helper.make_tensor_value_info("past_conv.0", f, ["batch", dim]),
    ]
    outputs = [
        helper.make_tensor_value_info("logits", f, [1, "seq", vocab]),
        helper.make_tensor_value_info("present.0.key", f, ["batch", "total", dim]),
        helper.make_tensor_value_info("present.0.value", f, ["batch", "total", dim]),
        helper.make_tensor_value_info("present_conv.0", f, ["batch", dim]),
    ]
    inits = [
        numpy_helper.from_array(embed, "E"),
        numpy_helper.from_array(proj, "W"),
        numpy_helper.from_array(np.array(1, np.int64), "axis"),
        numpy_helper.from_array(np.array(1, np.int64), "one_scalar"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([2**62], np.int64), "big"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one_f"),
        numpy_helper.from_array(np.array(3.0, np.float32), "three_f"),
        numpy_helper.from_array(np.random.default_rng(seed + 100).standard_normal(vocab).astype(np.float32) * 10, "V1"),
        numpy_helper.from_array(np.random.default_rng(seed + 200).standard_normal(vocab).astype(np.float32) * 10, "V2"),
    ]
    graph = helper.make_graph(nodes, "tiny-cached-decoder", inputs, outputs, inits)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


# S9 worker 6: "JSON-line requests: load; chat (messages, prefill, stop strings, max tokens);
# transcribe (audio, language); speak (text, voice, speed). One answer each, in order." What
# each request class is answered (the ``error`` kind, or ``ok``), by a worker of an installed
# model whose engine chats, transcribes and speaks; the kinds other than ok are this build's
# names for "not a request of the protocol" (bad_request) and a model that is not installed.
WORKER_ANSWERS: dict[str, str] = {
    "ping": "ok",
    "load": "ok",
    "chat": "ok",
    "chat without messages": "bad_request",
    "chat with a negative max_tokens": "bad_request",
    "transcribe a WAV": "ok",
    "transcribe bytes that are not a WAV": "bad_request",
    "transcribe audio that is not base64": "bad_request",
    "transcribe without audio": "bad_request",
    "speak": "ok",
    "speak at speed 0": "bad_request",
    "speak at a boolean speed": "bad_request",
    "speak without text": "bad_request",
    "an unknown op": "bad_request",
    "a line that is not JSON": "bad_request",
    "a JSON line that is not an object": "bad_request",
}

# S9 Dictation 3: "Recorder: first on PATH of pw-record, parec, arecord".
RECORDER_ORDER: tuple[str, ...] = ("pw-record", "parec", "arecord")


# S9 Translation: 'user turn Translate from English to <Language>.\nEnglish: <text>, assistant
# prefill <Language>:. One-line text stops at first line end.'
def translation_turn(language: str, text: str) -> tuple[str, str, bool]:
    """(the user turn, the prefill, whether the reply stops at the first line end)."""
    return f"Translate from English to {language}.\nEnglish: {text}", f"{language}:", text.strip("\n").count("\n") == 0


# S9 Eval: "chrF = mean (0 to 100) vs one reference" (chrF: Popović 2015, character n-grams of
# orders 1..6, spaces removed, precision and recall averaged over the orders, F with beta 2).
def reference_chrf(hypothesis: str, reference: str) -> float:
    from collections import Counter

    hyp, ref = "".join(hypothesis.split(" ")), "".join(reference.split(" "))
    precision, recall = [], []
    for order in range(1, 7):
        h = Counter(hyp[i : i + order] for i in range(max(len(hyp) - order + 1, 0)))
        r = Counter(ref[i : i + order] for i in range(max(len(ref) - order + 1, 0)))
        if sum(h.values()) == 0 or sum(r.values()) == 0:
            continue
        matched = sum((h & r).values())
        precision.append(matched / sum(h.values()))
        recall.append(matched / sum(r.values()))
    if not precision:
        return 0.0
    p, rr = sum(precision) / len(precision), sum(recall) / len(recall)
    return 0.0 if p + rr == 0 else 100.0 * 5 * p * rr / (4 * p + rr)


# The echo engine (the fake engine of the seed's bridge, "real serve, fake engine") as its
# documentation states it: chat answers the prefill and the last message's content (a
# translation request: the prefill, a space and its English text); transcribe answers
# "<samples> samples at <rate> Hz"; speak answers 100 silent samples per character at 24 kHz.
def echo_chat(content: str, prefill: str) -> str:
    if "\nEnglish: " in content:
        return prefill + " " + content.split("\nEnglish: ", 1)[1]
    return prefill + content


# S9 engine: "Own tokenizer (tokenizer.rs): byte-level BPE from tokenizer.json with added tokens,
# pre-tokenizer regex, ranked merges; other settings → load fails." A minimal document of the
# supported kind, the variants of it that are still that kind, and changes at every depth that
# are other settings (or not a tokenizer.json at all).
def tokenizer_document() -> dict[str, Any]:
    return {
        "version": "1.0",
        "added_tokens": [{"id": 3, "content": "<|end|>", "special": True, "lstrip": False, "rstrip": False, "single_word": False}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
    }


SPLIT_SEQUENCE: dict[str, Any] = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": " ?\\p{L}+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
    ],
}
TOKENIZER_ACCEPTED: dict[str, tuple[tuple[str, ...], Any]] = {
    "as it is": ((), None),
    "merges as pairs": (("model", "merges"), [["a", "b"]]),
    "no decoder": (("decoder",), None),
    "a ByteLevel post-processor": (("post_processor",), {"type": "ByteLevel"}),
    "a Split regex then ByteLevel": (("pre_tokenizer",), SPLIT_SEQUENCE),
    "a Split string then ByteLevel": (("pre_tokenizer",), {**SPLIT_SEQUENCE, "pretokenizers": [{**SPLIT_SEQUENCE["pretokenizers"][0], "pattern": {"String": " "}}, SPLIT_SEQUENCE["pretokenizers"][1]]}),
    "ByteLevel without its regex": (("pre_tokenizer", "use_regex"), False),
    "ignore_merges": (("model", "ignore_merges"), True),
    "no added tokens": (("added_tokens",), []),
}
TOKENIZER_REFUSED: dict[str, tuple[tuple[str, ...], Any]] = {
    "not an object": ((), [1, 2]),
    "a normalizer": (("normalizer",), {"type": "NFC"}),
    "a WordPiece decoder": (("decoder",), {"type": "WordPiece"}),
    "a decoder that is a string": (("decoder",), "ByteLevel"),
    "a template post-processor": (("post_processor",), {"type": "TemplateProcessing"}),
    "a WordPiece model": (("model", "type"), "WordPiece"),
    "no model": (("model",), None),
    "dropout": (("model", "dropout"), 0.1),
    "an unknown token": (("model", "unk_token"), "<unk>"),
    "a subword prefix": (("model", "continuing_subword_prefix"), "##"),
    "a word suffix": (("model", "end_of_word_suffix"), "</w>"),
    "byte fallback": (("model", "byte_fallback"), True),
    "a vocab that is a list": (("model", "vocab"), [["a", 0]]),
    "a vocab id that is a string": (("model", "vocab"), {"a": "0"}),
    "a merge of three": (("model", "merges"), ["a b c"]),
    "a merge that is a number": (("model", "merges"), [7]),
    "an added token without an id": (("added_tokens",), [{"content": "x"}]),
    "an empty added token": (("added_tokens",), [{"id": 4, "content": ""}]),
    "an added token with lstrip": (("added_tokens",), [{"id": 4, "content": "x", "lstrip": True}]),
    "an added token with rstrip": (("added_tokens",), [{"id": 4, "content": "x", "rstrip": True}]),
    "an added token with single_word": (("added_tokens",), [{"id": 4, "content": "x", "single_word": True}]),
    "an added token that is a string": (("added_tokens",), ["x"]),
    "no pre-tokenizer": (("pre_tokenizer",), None),
    "a Whitespace pre-tokenizer": (("pre_tokenizer",), {"type": "Whitespace"}),
    "a Sequence of one": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [SPLIT_SEQUENCE["pretokenizers"][1]]}),
    "a Sequence with ByteLevel's regex": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [SPLIT_SEQUENCE["pretokenizers"][0], {"type": "ByteLevel", "use_regex": True}]}),
    "a Split that is Removed": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{**SPLIT_SEQUENCE["pretokenizers"][0], "behavior": "Removed"}, SPLIT_SEQUENCE["pretokenizers"][1]]}),
    "an inverted Split": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{**SPLIT_SEQUENCE["pretokenizers"][0], "invert": True}, SPLIT_SEQUENCE["pretokenizers"][1]]}),
    "a Split with an empty string": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{**SPLIT_SEQUENCE["pretokenizers"][0], "pattern": {"String": ""}}, SPLIT_SEQUENCE["pretokenizers"][1]]}),
    "a Split without a pattern": (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{**SPLIT_SEQUENCE["pretokenizers"][0], "pattern": "x"}, SPLIT_SEQUENCE["pretokenizers"][1]]}),
}


def tokenizer_variant(path: tuple[str, ...], value: Any) -> Any:
    import copy

    if not path:
        return tokenizer_document() if value is None else value
    doc = copy.deepcopy(tokenizer_document())
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


# S9 engine: "loaded at run time from providers.tinyRuntimeLibrary, else ORT_DYLIB_PATH, else
# libonnxruntime.so". A value naming a file that does not exist is refused (derived: loading it
# would fail), never skipped for the next source.
def runtime_library_choice(setting: str, env: str) -> str:
    """Each of ``setting`` and ``env`` is "unset", "file" or "missing": the source chosen, or
    "refused"."""
    for source, state in (("setting", setting), ("env", env)):
        if state == "file":
            return source
        if state == "missing":
            return "refused"
    return "default"


# The engine kinds an installed model dir names in engine.json, and what each does (the ops
# of S9 worker 6 it answers).
ENGINE_OPS: dict[str, frozenset[str]] = {
    "echo": frozenset({"chat", "transcribe", "speak"}),
    "onnx-text": frozenset({"chat"}),
    "whisper": frozenset({"transcribe"}),
    "kokoro": frozenset({"speak"}),
}


# S9 worker 6: "Worker dies mid-request → typed Crashed + log path. ... longer answer → out of
# protocol". What the client makes of each class of answer line to a request.
CLIENT_ANSWERS: dict[str, str] = {
    "an ok answer": "ok",
    "the connection closed": "Crashed",
    "a partial line, then closed": "Crashed",
    "a line that is not JSON": "OutOfProtocol",
    "a JSON line that is not an object": "OutOfProtocol",
    "an error answer": "WorkerError",
}


# S9 worker 1-4 over time, for the one socket every process shares: "Same tag → use it (joined).
# Other tag → shutdown: worker removes socket ... client starts a new one (replaced). No live
# socket → client starts one (started)." A replaced worker leaves the socket at once and only
# finishes its in-flight requests; an exit (worker 5: idle, socket removed first) leaves no worker
# on the socket. Workers are numbered in the order they start.
NEED_OUTCOME: dict[str, str] = {"none": "started", "same": "joined", "other": "replaced"}


@dataclass(frozen=True)
class Seat:
    """The socket as the seed's worker rules leave it after some needs and exits, replayed from
    the actions alone: the worker seated on it (its number and tag) or none, how many workers
    were started, and the tag of the last need since the last exit."""

    seated: tuple[int, str] | None = None
    started: int = 0
    last: str | None = None

    def need(self, tag: str) -> tuple[Seat, str, int]:
        """A need with ``tag``: the socket after it, its outcome, the number of the worker serving it."""
        if self.seated is not None and self.seated[1] == tag:
            return Seat(self.seated, self.started, tag), NEED_OUTCOME["same"], self.seated[0]
        number = self.started + 1
        kind = "none" if self.seated is None else "other"
        return Seat((number, tag), number, tag), NEED_OUTCOME[kind], number

    def exit(self) -> Seat:
        """The seated worker exits: no worker on the socket, no need since."""
        return Seat(None, self.started, None)
