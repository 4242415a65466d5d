"""The one piece of I/O the models have: ``python -m bend.<area> SCENARIO.jsonl`` reads a
scenario file and prints the model's transcript, so the bridge can run any model as an
external program (BRIDGE_MODEL_CMD). Every area's ``__main__`` calls ``main``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def main(transcript: Callable[[list[dict[str, Any]]], list[str]], argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m bend.<area> SCENARIO.jsonl", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if line.strip()]
    for line in transcript(events):
        print(line)
    return 0
