"""Small real ONNX text decoder graphs and their NumPy reference: the oracle's (spec.oracles.tiny)."""

from spec.oracles.tiny import build, reference_greedy, reference_logits, weights

__all__ = ["build", "reference_greedy", "reference_logits", "weights"]
