"""One writer: two real processes open one session for writing; the second gets
SessionLocked naming the first, and gets the session once the first is gone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eukhe.session import Store, user

HOLD = """
from spec import breaks; breaks.install_from_env()  # a deliberate break applies here too
import sys
from pathlib import Path
from eukhe.session import Store, user
session = Store(Path(sys.argv[1])).open("s", writer=True)
print("holding", flush=True)
sys.stdin.read()            # hold the lock until the test closes our stdin
session.conversation().commit([user("from the first writer")])
session.close()
"""

TRY = """
from spec import breaks; breaks.install_from_env()
import sys
from pathlib import Path
from eukhe.session import SessionLocked, Store, user
try:
    session = Store(Path(sys.argv[1])).open("s", writer=True)
except SessionLocked as error:
    print("locked:", error.holder)
    sys.exit(3)
session.conversation().commit([user("from the second writer")])
session.close()
print("wrote")
"""


def _python(code: str, root: Path, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, str(root)], text=True, stdout=subprocess.PIPE, **kwargs)  # type: ignore[call-overload]


def test_a_second_writer_process_gets_an_error_naming_the_holder(tmp_path: Path) -> None:
    Store(tmp_path).create("s").close()
    first = _python(HOLD, tmp_path, stdin=subprocess.PIPE)
    assert first.stdout is not None and first.stdin is not None
    assert first.stdout.readline() == "holding\n"

    second = _python(TRY, tmp_path)
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 3, out
    assert out.startswith(f"locked: pid {first.pid} on "), out

    cli = subprocess.run(
        [sys.executable, "-m", "eukhe", "session", "--session-dir", str(tmp_path), "rewind", "s", "1"],
        capture_output=True, text=True, timeout=60,
    )
    assert cli.returncode == 1
    assert f"locked for writing by pid {first.pid} on " in cli.stderr

    first.stdin.close()  # the first writer commits and lets go
    assert first.wait(timeout=60) == 0
    third = _python(TRY, tmp_path)
    out, _ = third.communicate(timeout=60)
    assert third.returncode == 0 and out == "wrote\n", out
    with Store(tmp_path).open("s", writer=False) as session:
        assert [e.content for e in session.conversation().user_view()] == ["from the first writer", "from the second writer"]


def test_a_killed_writer_leaves_no_stale_lock(tmp_path: Path) -> None:
    Store(tmp_path).create("s").close()
    first = _python(HOLD, tmp_path, stdin=subprocess.PIPE)
    assert first.stdout is not None
    assert first.stdout.readline() == "holding\n"
    first.kill()
    first.wait()
    with Store(tmp_path).open("s") as session:
        session.conversation().commit([user("after the crash")])
