"""What a worker runs requests on: an engine loaded from an installed model dir.

The model dir names its engine in ``engine.json`` (``{"kind": ...}``), written at install
time from the catalog entry:
- ``onnx-text``: the ONNX text decoder (``eukhe.tiny.text``) with our tokenizer;
- ``echo``: the fake engine of the election bridge and the worker tests (the seed's bridge
  ran "real serve, fake engine"): chat answers the last message's content; a content of
  ``hold:<dir>`` first meets the test at ``<dir>/received`` (a FIFO the test reads: the
  request has arrived) and then waits on ``<dir>/release`` (a FIFO the test writes), so a
  test holds a request in flight without any timing; ``crash`` ends the process mid-request; a translation request (``...\nEnglish: <text>``)
  is answered with its text, the echo of a failing tiny model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol


class EngineError(Exception):
    """The model dir holds no engine this build can run."""


class Engine(Protocol):
    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str: ...


class EchoEngine:
    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        content = str(messages[-1].get("content", "")) if messages else ""
        if content.startswith("hold:"):
            where = Path(content[5:])
            with open(where / "received", "w", encoding="utf-8"):
                pass
            with open(where / "release", encoding="utf-8") as release:
                release.read()
        if content == "crash":
            os._exit(70)
        if "\nEnglish: " in content:  # a translation request: echo its text, as failing tiny models do
            return prefill + " " + content.split("\nEnglish: ", 1)[1]
        return prefill + content


def load(model_dir: Path) -> Engine:
    spec_file = model_dir / "engine.json"
    try:
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise EngineError(f"{model_dir} is not installed (no engine.json)") from error
    except ValueError as error:
        raise EngineError(f"{spec_file}: not JSON: {error}") from error
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind == "echo":
        return EchoEngine()
    if kind == "onnx-text":
        from eukhe.tiny.text import TextEngine, TextError
        from eukhe.tiny.tokenizer import TokenizerError

        try:
            return TextEngine.load(model_dir)
        except (OSError, ValueError, TextError, TokenizerError) as error:
            raise EngineError(f"{model_dir}: cannot load the text engine: {error}") from error
    raise EngineError(f"{spec_file}: unknown engine kind {kind!r}")
