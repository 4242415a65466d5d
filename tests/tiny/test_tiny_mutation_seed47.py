"""Tiny models to the letter, second round. The seed-47 mutation sample's survivors are all killed
by tests written before this file (tests/tiny/test_tiny_to_the_letter.py, test_tiny_wire_classes.py;
rerun by mutmut at 91a79e0) but worker.run 40, listed equivalent. The fresh seed-61 sample, drawn
after them and before this file, left these untested, each seen here from outside with values
written by hand:

- the byte-level alphabet is GPT-2's table, every printable ASCII byte standing for itself (S9
  engine: "byte-level BPE from tokenizer.json"), '}' and '~' included;
- role judge reads its own chain from the settings, modelRoles.judge and
  retry.fallbackChains.judge (S9 roles 1, Uses: Judge);
- a title runs in the background: the turn never waits for it, nor does the process's exit
  (S9 Uses: Titles)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from eukhe.tiny import roles, uses
from eukhe.tiny.settings import TinySettings
from eukhe.tiny.tokenizer import bytes_to_unicode
from tests.tiny.conftest import LIMIT

ROOT = Path(__file__).resolve().parents[2]


def test_the_byte_alphabet_is_gpt2s() -> None:
    """GPT-2's table: the bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves; the other
    68, in byte order, for U+0100 onwards (space is 'Ġ', the soft hyphen 'Ń')."""
    table = bytes_to_unicode()
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    assert len(kept) == 188
    for b in kept:
        assert table[b] == chr(b), b
    assert table[ord("}")] == "}" and table[ord("~")] == "~"
    shifted = [*range(0x00, 0x21), *range(0x7F, 0xA1), 0xAD]
    assert [table[b] for b in shifted] == [chr(0x100 + i) for i in range(68)]
    assert (table[0x00], table[0x20], table[0x7F], table[0xA0], table[0xAD]) == ("Ā", "Ġ", "ġ", "ł", "Ń")
    assert sorted(table) == list(range(256))


def test_role_judge_reads_its_own_settings(tmp_path: Path) -> None:
    """modelRoles.judge with an explicit empty fallback chain: the judge is that provider
    classifier (authenticated), never the catalog's local models (none is installed here)."""
    settings = TinySettings(primaries={"judge": "openai/gpt-x"}, chains={"judge": ()})
    assert uses.judge_model(tmp_path, provider_classifiers=frozenset({"openai/gpt-x"}), settings=settings) == "openai/gpt-x"
    with pytest.raises(roles.Unavailable) as caught:  # without auth: the primary only, so none
        uses.judge_model(tmp_path, settings=settings)
    assert caught.value.candidates == ("openai/gpt-x",)
    chained = TinySettings(chains={"judge": ("openai/gpt-y", "openai/gpt-x")})
    assert uses.judge_model(tmp_path, provider_classifiers=frozenset({"openai/gpt-x"}), settings=chained) == "openai/gpt-x"
    # another role's settings are not the judge's
    other = TinySettings(primaries={"tiny": "openai/gpt-x"}, chains={"tiny": ()})
    with pytest.raises(roles.Unavailable) as caught:
        uses.judge_model(tmp_path, provider_classifiers=frozenset({"openai/gpt-x"}), settings=other)
    assert caught.value.candidates == ("local/lfm2.5-230m", "local/lfm2.5-350m")


def test_a_title_runs_in_a_daemon_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The title's thread never holds the process open: it is a daemon thread. Here its model
    resolution waits for the test, then fails: no title."""
    go = threading.Event()
    titles: list[str | None] = []

    def waiting(*_: object, **__: object) -> str:
        go.wait(LIMIT)
        raise roles.Unavailable("tiny", ())

    monkeypatch.setattr(uses, "resolve", waiting)
    thread = uses.start_title(tmp_path, "hello", titles.append)
    assert thread is not None
    try:
        assert thread.daemon is True and thread.name == "eukhe-title"
        assert thread.is_alive() and titles == []  # start_title returned while the title waits
    finally:
        go.set()
        thread.join(LIMIT)
    assert not thread.is_alive() and titles == [None]


def test_a_process_exits_with_its_title_still_running(tmp_path: Path) -> None:
    """A process whose title never ends still exits at once when its main thread returns."""
    script = textwrap.dedent(
        f"""
        import threading
        from pathlib import Path
        from eukhe.tiny import uses

        def never(*_, **__):
            threading.Event().wait()

        uses.resolve = never
        thread = uses.start_title(Path({str(tmp_path)!r}), "hello", print)
        assert thread is not None and thread.is_alive()
        print("main done", flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=LIMIT, check=False)
    assert (done.returncode, done.stdout) == (0, "main done\n"), done.stderr
