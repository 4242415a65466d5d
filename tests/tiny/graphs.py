"""Small real ONNX text decoder graphs built with the `onnx` package, and their NumPy reference.

The graph: logits = cumsum(E[input_ids], axis=1) @ W (+ b), so the next token depends on the
whole prefix; variants add the documented optional inputs (attention_mask, position_ids,
num_logits_to_keep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weights(vocab: int, dim: int, seed: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((vocab, dim)).astype(np.float32), rng.standard_normal((dim, vocab)).astype(np.float32)


def build(path: Path, vocab: int, dim: int, seed: int, *, optional: bool = False, keep: bool = False) -> Path:
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
