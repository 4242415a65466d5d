"""Helpers of the terminal UI's tests: ``until`` waits on a condition of the app while its pilot
lets it run (no sleep times a step: the deadline only bounds a failing run); ``attached``: the
app has the agent's state; ``session_document`` reads a document of session s1 as a reader,
while the agent writes; ``mock_agent`` serves s1 in
the test's own event loop (the real agent's requests, no turn loop: the app headless on a mock
agent, as the seed's dictation tests run); ``recorders`` puts ``/bin/sh`` recorder programs
alone on PATH; ``screenshot`` saves the screen as SVG (Textual's export) and PNG under build/tui."""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from eukhe.agent import daemon
from eukhe.agent import protocol as p
from eukhe.session import MAIN, Store

WAIT = 30.0  # seconds: bounds a wait that never comes true (a failing run)
SHOTS = Path(__file__).resolve().parents[2] / "build" / "tui"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


async def until(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    """Let the app run until ``condition`` holds; AssertionError naming ``what`` past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; the screen shows:\n{pilot.app.transcript.text}\n{pilot.app.status_text}")
        await pilot.pause(0.01)


def attached(app: Any) -> bool:
    """The app has the agent's state (the first event of a connection)."""
    return any(isinstance(e, p.StateEvent) for e in app.seen)


def session_document(home: Path, name: str) -> Any:
    """A document of session s1's main conversation, read as a reader (the agent writes)."""
    with Store(home / "sessions").open("s1", writer=False) as session:
        return session.conversation(MAIN).document(name)



@contextlib.asynccontextmanager
async def mock_agent(home: Path) -> AsyncIterator[daemon.Daemon]:
    """The agent of session s1 in this event loop, with no turn loop (turns are refused)."""
    session = daemon._open_writer(Store(home / "sessions"), "s1")
    agent = daemon.Daemon(home, session, None)
    await agent.start()
    try:
        yield agent
    finally:
        await agent.close()


def recorders(where: Path, monkeypatch: pytest.MonkeyPatch, programs: dict[str, str]) -> Path:
    """``programs`` (name -> the body of a ``/bin/sh`` script) in ``where``, which becomes the
    whole PATH (with ``head`` and ``sleep`` for the scripts): no recorder of the machine is found.
    Temporary files (the takes' WAVs) go to ``where/tmp``."""
    where.mkdir(parents=True, exist_ok=True)
    for tool in ("head", "sleep"):
        found = shutil.which(tool)
        assert found is not None, tool
        (where / tool).symlink_to(found)
    for name, body in programs.items():
        script = where / name
        script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(where))
    (where / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(where / "tmp"))
    return where


AUDIO = "head -c 3200 /dev/zero; exec sleep 60"  # 0.1 s of silence, then records until stopped
SILENT = "exec sleep 60"  # records no audio at all


def screen_text(app: Any) -> str:
    """What the screen shows now, as the SVG export draws it."""
    return html.unescape(app.export_screenshot()).replace("\xa0", " ")


def screenshot(app: Any, name: str) -> str:
    """Save the screen as build/tui/NAME.svg (Textual's export) and NAME.png (the SVG drawn by
    cairosvg, the terminal's font family turned into the machine's monospace one), and return the
    SVG's text as a reader sees it. The PNG must be a picture of the whole screen whose bottom
    row, the status line, holds drawn text: the status bar's colour and a lighter one."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    svg = Path(app.save_screenshot(f"{name}.svg", str(SHOTS))).read_text(encoding="utf-8")
    try:
        import cairosvg
    except OSError as missing:  # cairocffi found no libcairo: the machine cannot draw SVG
        pytest.skip(f"no PNG screenshot: cairosvg cannot load libcairo ({missing})")
    monospace = svg.replace('"Fira Code"', "monospace").replace("Fira Code, monospace", "monospace")
    png = SHOTS / f"{name}.png"
    cairosvg.svg2png(bytestring=monospace.encode("utf-8"), write_to=str(png))
    _check_png(png.read_bytes(), app.size.height)
    return html.unescape(svg).replace("\xa0", " ")


def _check_png(data: bytes, rows: int) -> None:
    import io

    from PIL import Image

    assert data.startswith(PNG_MAGIC), "the screenshot is not a PNG"
    image = Image.open(io.BytesIO(data)).convert("L")
    width, height = image.size
    assert width > 400 and height > 200, image.size
    # the status line: the band of the last text row, above the frame's bottom edge
    row = (height - 10) / (rows + 2)  # the window's title bar is about two rows high
    band = image.crop((20, int(height - 10 - row), width - 20, height - 12))
    shades = sorted(set(band.getdata()))
    assert shades[-1] - shades[0] > 60, f"the status line of the PNG holds no drawn text (shades {shades[0]}..{shades[-1]})"
