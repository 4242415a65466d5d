"""The tokenizer benchmark (issue 15): our byte-level BPE (eukhe.tiny.tokenizer) against
`tokenizers` on the same tokenizer.json (trained here from a fixed corpus: nothing downloads)
and the same texts. Prints JSON: bytes, tokens, seconds and MB/s for each, their ratio, and
whether the ids agreed.

    .venv/bin/python benchmarks/bench_tokenizer.py [--kind gpt2|llama3] [--repeat 200]

Both sides encode with a cold cache first (ours caches pre-token words), then warm.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "impl")]

from eukhe.tiny.tokenizer import Tokenizer  # noqa: E402
from tests.tiny.tokenizer_files import CORPUS, train, write  # noqa: E402


def texts(repeat: int) -> list[str]:
    rng = random.Random(15)
    words = " ".join(CORPUS).split()
    return [" ".join(rng.choice(words) for _ in range(rng.randrange(5, 60))) for _ in range(repeat)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", default="llama3", choices=["gpt2", "llama3"])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    reference = train(args.kind, vocab_size=1000)
    path = write(reference, Path(tempfile.mkdtemp(prefix="ekbench")))
    ours = Tokenizer.from_file(path)
    batch = texts(args.repeat)
    size = sum(len(t.encode("utf-8")) for t in batch)
    result: dict[str, object] = {"kind": args.kind, "texts": len(batch), "bytes": size}
    for label in ("cold", "warm"):
        start = time.perf_counter()
        mine = [ours.encode(t) for t in batch]
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        theirs = [reference.encode(t, add_special_tokens=False).ids for t in batch]
        ref_s = time.perf_counter() - start
        result[label] = {
            "ours_s": round(ours_s, 4),
            "tokenizers_s": round(ref_s, 4),
            "ours_mb_s": round(size / ours_s / 1e6, 2),
            "tokenizers_mb_s": round(size / ref_s / 1e6, 2),
            "ours_slower_by": round(ours_s / ref_s, 1),
            "tokens": sum(map(len, mine)),
            "ids_agree": mine == theirs,
        }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
