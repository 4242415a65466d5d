"""bash with real processes: output and exit code, a timeout and a cancellation that end the whole
process group (a child ignoring SIGTERM included), leftovers of a finished command ended, the
budget as the timeout's ceiling, output clipped head and tail by the memory's cap_text however
much a command writes.

No test sleeps: a command that must still be running when the test acts blocks on a fifo the
test holds, and the test learns the group's id by reading another fifo the command writes.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from eukhe.agent.tools import ToolContext, ToolResult, run_call
from eukhe.agent.tools.bash import Collector, _Elided
from eukhe.memory.lines import CAP, cap_text

Call = Callable[..., ToolResult]


EXIT_WAIT_S = 10  # how long a signalled process may take to exit before it counts as living


def members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that have not exited, read from /proc (a zombie has
    exited: this machine's PID 1 does not reap orphans, so a killed orphan can stay one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def living(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still alive once each has had EXIT_WAIT_S to exit.
    os.killpg(pgid, 0) raising ProcessLookupError says none is left. Otherwise each member is
    waited for on a pidfd (readable when the process exits, a child of ours or not): SIGKILL
    cannot be caught, but a process dies only when the kernel next runs it."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    for pid in members(pgid):
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], EXIT_WAIT_S)
        finally:
            os.close(fd)
    return members(pgid)


def test_bash_gives_output_in_order_and_the_exit_code(call: Call, workdir: Path) -> None:
    result = call("bash", command="echo out; echo err >&2; pwd")
    assert (result.is_error, result.kind) == (False, "")
    assert result.text == f"out\nerr\n{os.path.realpath(workdir)}\nexit code 0"


def test_a_failing_command_is_an_error_result(call: Call) -> None:
    result = call("bash", command="printf 'no newline'; exit 3")
    assert (result.is_error, result.kind) == (True, "exit_status")
    assert result.text == "no newline\nexit code 3"


def test_stdin_is_empty(call: Call) -> None:
    assert call("bash", command="cat; echo done").text == "done\nexit code 0"


def test_a_timeout_kills_the_whole_group_even_a_child_ignoring_sigterm(call: Call) -> None:
    result = call("bash", command="trap '' TERM; sleep 1000 & echo $$ $!; wait", timeout_ms=200)
    assert (result.is_error, result.kind) == (True, "timeout")
    pids, status = result.text.split("\n")
    assert status == "timeout: the command ran past 200 ms; its process group was killed"
    pgid, child = map(int, pids.split())
    assert child != pgid
    assert living(pgid) == []


def test_the_budget_is_the_timeouts_ceiling(context: ToolContext) -> None:
    async def main() -> ToolResult:
        budget = replace(context, bash_timeout_ms=200, cancel=asyncio.Event())
        return await run_call("bash", {"command": "echo $$; exec sleep 1000", "timeout_ms": 100_000}, budget)

    result = asyncio.run(main())
    pgid, status = result.text.split("\n")
    assert status == "timeout: the command ran past 200 ms (the tool blocking budget; 100000 ms was asked); its process group was killed"
    assert living(int(pgid)) == []


def started(tmp_path: Path, command: str) -> tuple[str, Path]:
    """A command that writes its group id and its child's pid to a fifo, then blocks on another
    fifo nobody writes; the fifo to read them from."""
    ready, block = tmp_path / "ready", tmp_path / "block"
    os.mkfifo(ready)
    os.mkfifo(block)
    return f"trap '' TERM; {command} & echo $$ $! > {ready}; read x < {block}", ready


async def group_of(ready: Path) -> int:
    """The group id the command writes (opening the fifo waits for the command to open it)."""
    text = await asyncio.to_thread(ready.read_text)
    return int(text.split()[0])


def test_the_cancellation_hook_kills_the_whole_group(context: ToolContext, tmp_path: Path) -> None:
    command, ready = started(tmp_path, "sleep 1000")

    async def main() -> tuple[ToolResult, int]:
        hooked = replace(context, cancel=asyncio.Event())
        running = asyncio.create_task(run_call("bash", {"command": command}, hooked))
        pgid = await group_of(ready)
        assert members(pgid) != []
        hooked.cancel.set()
        return await running, pgid

    result, pgid = asyncio.run(main())
    assert (result.is_error, result.kind) == (True, "cancelled")
    assert result.text == "cancelled: the turn was cancelled; the command's process group was killed"
    assert living(pgid) == []


def test_cancelling_the_task_kills_the_whole_group(context: ToolContext, tmp_path: Path) -> None:
    command, ready = started(tmp_path, "sleep 1000")

    async def main() -> int:
        running = asyncio.create_task(run_call("bash", {"command": command}, replace(context, cancel=asyncio.Event())))
        pgid = await group_of(ready)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        return pgid

    assert living(asyncio.run(main())) == []


def test_a_cancelled_turn_runs_no_command(context: ToolContext, workdir: Path) -> None:
    async def main() -> ToolResult:
        hooked = replace(context, cancel=asyncio.Event())
        hooked.cancel.set()
        return await run_call("bash", {"command": "touch ran"}, hooked)

    result = asyncio.run(main())
    assert result.kind == "cancelled" and result.text == "cancelled: bash did not run: the turn was cancelled"
    assert not (workdir / "ran").exists()


def test_what_a_finished_command_left_running_is_ended(call: Call) -> None:
    result = call("bash", command="sleep 1000 >/dev/null 2>&1 & echo $$")
    pgid, status = result.text.split("\n")
    assert status == "exit code 0"
    assert living(int(pgid)) == []


def test_a_background_job_holding_the_output_does_not_hold_the_call(call: Call) -> None:
    result = call("bash", command="sleep 1000 & echo $$")  # the job inherits the output pipe
    pgid, status = result.text.split("\n")
    assert status == "exit code 0"  # not a timeout: the call ended when bash exited
    assert living(int(pgid)) == []


def test_a_process_that_leaves_the_group_does_not_hold_the_call(call: Call) -> None:
    result = call("bash", command="setsid sleep 1000 & echo $!")
    pid, status = result.text.split("\n")
    try:
        assert status == "exit code 0"
    finally:
        os.kill(int(pid), signal.SIGKILL)  # it escaped the group; the test ends it by its pid


@pytest.mark.parametrize("count", [20_000, 1_000_000])  # the second is far past what is held while streaming
def test_output_is_clipped_head_and_tail_as_cap_text_clips_the_whole(call: Call, count: int) -> None:
    whole = "".join(f"{i}\n" for i in range(1, count + 1))
    status = "exit code 0"
    result = call("bash", command=f"seq 1 {count}")
    assert result.text == cap_text(whole, CAP - len(status) - 1) + status  # the output ends with a newline
    assert len(result.text) == CAP - 1
    assert result.text.startswith("1\n2\n3\n") and result.text.endswith(f"{count}\nexit code 0")


def test_the_collector_decodes_across_chunks_and_holds_only_the_ends() -> None:
    whole = "".join(f"{i}: héllo wörld €\n" for i in range(1000))
    collector = Collector(keep=60)
    data = whole.encode()
    for i in range(0, len(data), 7):  # 7 bytes at a time: multibyte characters are split
        collector.add(data[i : i + 7])
    collector.add(b"", final=True)
    assert (collector.head, collector.tail, collector.total) == (whole[:60], whole[-60:], len(whole))
    assert str(collector.text(cap=60)) == cap_text(whole, 60)
    assert str(collector.text(cap=55)) == cap_text(whole, 55)
    with pytest.raises(AssertionError):
        collector.text(cap=61)  # clipping to more than is held could need what was dropped


def test_invalid_utf8_is_replaced_not_fatal(call: Call) -> None:
    assert call("bash", command=r"printf 'a\377b\n'").text == "a\ufffdb\nexit code 0"


def test_an_elided_text_reads_only_its_ends() -> None:
    text = _Elided("abc", "xyz", 100)
    assert len(text) == 100
    assert text[:2] == "ab" and text[97:] == "xyz" and text[98:100] == "yz"
    for middle in (slice(2, 50), slice(50, None), 5):
        with pytest.raises(AssertionError):
            text[middle]
