"""A process on a pseudo-terminal (the standard library's pty), for the tests that drive eukhe as
a person at a terminal would: type lines, wait for text on the screen."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
from collections.abc import Callable
from pathlib import Path


class Screen:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, *, preexec: Callable[[], None] | None = None) -> None:
        """``preexec`` (run in the child before it executes) replaces the child's new session."""
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=preexec is None, preexec_fn=preexec
        )
        os.close(slave)
        self.fd = master
        self.seen = ""
        self.mark = 0

    def type(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        os.write(self.fd, data + b"\n")

    def expect(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait until ``pattern`` (a regex) shows after the last match; the text up to its end."""
        regex = re.compile(pattern)
        while True:
            found = regex.search(self.seen, self.mark)
            if found is not None:
                shown = self.seen[self.mark : found.end()]
                self.mark = found.end()
                return shown
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise AssertionError(f"no {pattern!r} on the screen within {timeout} s; it shows:\n{self.seen[self.mark:]}")
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            if not data:
                raise AssertionError(f"the process ended before {pattern!r}; the screen:\n{self.seen[self.mark:]}")
            self.seen += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def close(self) -> int:
        """Wait for the process to end (kill it after 30 s) and close the terminal."""
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.fd)
