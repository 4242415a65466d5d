"""Small real ONNX text decoder graphs and their NumPy reference: the oracle's (spec.oracles.tiny)."""

from spec.oracles.tiny import build, build_cached, reference_greedy, reference_logits, weights

__all__ = ["build", "build_cached", "reference_greedy", "reference_logits", "weights"]
