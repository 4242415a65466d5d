"""Local tiny models (inference.md S9): catalog and downloads, the shared worker and its
election, the ONNX engine, our own tokenizer, roles and their uses."""
