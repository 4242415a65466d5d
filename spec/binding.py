"""Measured binding: how tightly the laws and bridges hold production code.

Two measures, both shown in the law report:

- **coverage**: branch coverage of impl/eukhe by the laws and the bridges alone (no
  regression test counts), per production area and per module. ``make test`` runs tests/laws
  and tests/bridge under coverage.py, then ``python -m spec.binding coverage`` writes
  build/coverage.json and fails when an area or a module is below its floor. An area the seeds give no
  model (``OWN_JUDGES``: the terminal UI) has no law or bridge: it is measured by its own
  outside judges instead, in a data file of their own, and the report names them.
- **mutation**: ``make mutate [AREA=..]`` runs mutmut over an area's production modules
  with the suites of ``make test`` and writes build/mutation.json (killed, survived,
  equivalent with their reasons from spec/equivalent_mutants.tsv).

python -m spec.binding coverage [--data FILE] [--laws-dir DIR] [--floor 95]
python -m spec.binding mutation [--laws-dir DIR]   (reads mutmut's results from mutants/)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "impl" / "eukhe"

# Production areas and the modules each one is: the unit in which binding is measured.
AREAS: dict[str, tuple[str, ...]] = {
    "effort": ("effort.py",),
    "settings": ("settings/",),
    "directors": ("directors/",),
    "session": ("session/",),
    "memory": ("memory/",),
    "inference": ("inference/",),
    "tiny": ("tiny/",),
    "cli": ("__init__.py", "cli.py", "__main__.py", "paths.py", "corebuild.py", "strict_json.py", "commands/"),
    "agent": ("agent/",),
    "tui": ("tui/",),
}
# Areas that must meet the floor: the built ones (an area with no module yet is skipped).
FLOOR = 95.0
# Areas not yet at the floor, each held at the level last measured (floored to a whole percent),
# so that it cannot fall further until its laws reach FLOOR. Memory was held at 91 until its store
# laws took it past 95. inference, tiny and the command line joined after d0137f9 (laws and bridges
# alone: 79.76%, 90.08%, 25.16%). Measured at 47cc027 on a clean clone: inference 76.23% (its old
# modules rose to 88% as the laws reached the wire; eight modules joined the area since, which only
# tests/wire judges: the azure, codex, vertex and mistral clients at 11-35%, Bedrock's eventstream
# and sigv4, retry and pool at 0%), tiny 92.57%, the command line 47.08% (its bridge). inference
# rose to 81.81% (a lower bound: the infer, catalog_union, default_model, compactor, turn, tiny,
# chat_store and optchat laws with the infer, compactor, cli and optchat bridges) when the infer wire
# laws took in every built wire API (azure, codex, vertex, mistral, bedrock: 63-75% each).
# The hardening of issue 30 added code that only tests judge so far (tests/tiny, tests/cli): the
# tiny downloads' resume and sweep, the client's re-election and deadlines, the tokenizer's
# post-processors; `eukhe login` and the exit paths of the command line. Measured on a clean clone
# at 57a26ee: tiny 86.21% (was 92.57%), the command line 46.48% (was 47.08%); held there until laws
# and bridge scenarios reach that code.
# The agent (issue 28) is built in steps. The loop bridge (bend/agent.py against eukhe/agent/loop.py)
# judges the turn loop (loop.py 91%, measured by the loop bridge alone at 33f2d27) and the tools it
# calls; the agent process (daemon, protocol, client, runner, inflight: 1,300 statements) is judged
# by tests/agent only, so the area stands at 27% by laws and bridges: held at 26 until a bridge
# drives the agent process. Subagents (subagents.py, child.py: a child in its own process) joined
# the area judged by tests/agent alone: measured by laws and bridges at f0e97f3, 23.47%. The daemon
# bridge (the agent process's requests against bend/daemon.py) then took it to 45.72% (clean-clone
# CI at aa45dbf): held at 45. The chat served by the agent (agent/chat.py, runner's chat) came in
# at 3f782fb with the turn law judging its path (44.93% at 9054b3a with /rewind, which no bridge
# drove); the turn law's /memory and the daemon bridge's /memory and /rewind refusals took it back
# over 45. Measured at 9054b3a, the others were ratcheted: the command line 48.61%, inference
# 82.77%, tiny 86.21%. The inference laws then reached the wire (the pool, the retry wrapper, each
# API's sign-in, broken streams, resolve_model on a real agent dir): 90.90% by the infer, catalog and
# default_model laws and the infer bridge alone at bbd9bb7, a lower bound of the whole run: held at 90.
# The clean-clone CI of 0f0a67d measured agent 69.46% (the loop bridge now drives session compaction
# and real subagent children), the command line 56.24%, inference 91.99%, tiny 86.21%: held a point
# or more below each (agent 68, cli 55, inference 91), since process interleavings move a few branches.
# The terminal UI (eukhe/tui) is no area: the seed gives client input no model, so no law or
# bridge reaches it; Textual's pilot and the tmux test judge it.
# The clean-clone CI of 040e77c measured inference 96.32% (the infer laws reach the wire's failures,
# refusals, malformed events, sign-ins and the guard on each API): it meets the floor and is held no
# more. Tiny 95.08% (the tiny laws reach the client's faults, the recorder, downloads, tokenizer
# settings and broken model dirs) is held at 94 by the same rule of a point below, and agent 81.77%
# (coverage now follows the processes the bridges start: the subagent children, and the daemon
# bridge's real agent process) at 80; the command line (56.41%) stays at 55.
# The command-line bridge then ran ask and chat against the loopback server, downloads, simulate and
# laws pin (the cli area by its bridge alone: 73%), and the daemon and loop bridges drove the chat
# served by the agent, aborts, bash's edges, titles and in-flight slots (the agent area by its
# bridges alone: 87%, 89% with the turn law): held at 70 and 85 until the clean-clone CI measures them.
# Then the command-line bridge took in the command line's own settings (paths, streams, locks,
# --help, bytes, laws --area, the --cache measure's shape: 85% by that bridge alone) and the daemon
# bridge the agent process's takeovers, relays and reach (89% by the two agent bridges alone):
# held below each, 83 and 88, until the clean-clone CI measures them.
# Then the command-line bridge took in the terminal runs, python -m eukhe.corebuild in a scratch
# checkout and the chat's unreachable agent (90.07% by that bridge alone), and the agent bridges the
# chat served as the session, a stalled subagent, a terminal as the agent's stdin, a broken global
# cfg and raw lines (92.94% by the two bridges alone): held at 89 and 91.
# Then the command-line bridge took in later chats of one agent dir, an agent dir too deep for a
# socket address, forced tool calls in directors simulate, a --project dir that is not there, an
# endless script, drawings that cannot be written, and ask and memory simulate --cache measured
# after their event loop (91.95% by that bridge alone): the command line held at 91.
# Then the agent bridges took in a reply's streamed reasoning, a subagent killed before it reports,
# one whose agents/NAME.cfg does not parse, a child and a turn of a model with no credentials,
# /rewind while a turn or a background child runs, the agent stopped while a turn runs, a turn
# aborted while it waits for a providerMaxInFlight slot, a FIFO and a file past the read limit for
# the tools, an agent dir whose agents is a file, a Director stack document that does not parse, a
# takeover's claim that cannot bind its socket and a terminal line past the protocol's limit (94.75%
# by the two bridges alone, 94.90% with the turn and limit laws): the agent held at 94.
# Then the agent bridges took in steers, follow-ups and aborts sent with their turn, a Director
# stack document that stops parsing mid-turn, a saved default of a provider with no credentials and
# a client that never reads (95.64% by the two bridges and the turn and limit laws, at 3088277):
# still held at 94 until a clean-clone CI measures it over the floor. And the command-line bridge
# took in tiny models that answer (say, transcribe, translate-eval on the echo engine), lines typed
# into a running chat turn (held by the loopback server, no timing), the chat memory read after
# turns, empty replies, a closed stderr, a long cache measure, JSON at the reader's edges, broken
# models.json and the repetition guard: 95.02% by that bridge alone (at 91a79e0 + its scenarios):
# the command line held at 94 until a clean-clone CI measures it (one path of scenario 0301 is
# timing-dependent, about 5 units).
# The terminal UI (impl/eukhe/tui) and the JSON reader (strict_json.py, now in the command line's
# area, whose tests judge it) were in no area, so their coverage counted nowhere: the terminal UI
# joined at 20.10% (the clean-clone CI of 675236d: only the command-line bridge's terminal
# runs reach it; no bridge drives its screens), held at 20. Measured since by its own judges
# (OWN_JUDGES, below): 97.56% by tests/tui under Textual's pilot (all but the tmux test), every
# module at 96% or more: it meets the floor and is held no more.
# The clean-clone CI of 1e8f96a measured the agent at 95.59% and the tiny models at 95.34%: both meet
# the floor and are held no more. The command line measured 94.93% there (its chat client at 89%:
# a step row, a subagent's failure, a turn_failed event, an agent gone mid-chat, an answer of ok to
# a command are reached by no chat scenario of the bridge): still held at 94.
HELD: dict[str, float] = {"cli": 94.0}

LAWS_AND_BRIDGES: Final = "laws and bridges alone"
# Areas the seeds give no model, so that no law or bridge can ever judge them: each is measured by
# the outside judge that speaks for it instead, run under coverage into a data file of its own
# (never combined into the laws' and bridges' measure, nor they into its). The terminal UI: the seed
# says "Client input: no Bend model" (inference.md S9); its judges are its tests under Textual's
# pilot, clients of real agent processes and of the agent served in the test (tests/tui; the tmux
# terminal test runs unmeasured, see the Makefile). Before, it was measured by laws and bridges like
# every area and stood at 20.10%: only the command-line bridge's terminal runs reached it.
OWN_JUDGES: dict[str, tuple[str, str]] = {
    "tui": ("tests/tui under Textual's pilot, on real agents (the seed gives client input no model)", "build/coverage-tui/.coverage"),
}


# Every module meets the floor too (issue 26: at least 95% a module), not only its area's sum. The
# modules measured below it when the per-module floor came in are held, each at its level then less
# a point or two units' worth (a line or a branch of the module), whichever is more, floored to a
# whole percent, since the processes the judges start move a few branches from run to run; five
# modules measured just over the floor whose judges run processes or an event loop (the agent's
# reach, the wire's stream reading, the tiny worker, the chat memory's turn, the terminal UI's
# dictation) are held by the same rule. A held module is raised as its laws and bridges reach more. Measured by laws and bridges
# alone at 8927628 (production as of 771322f): the figure after each; those marked "at b8eb0c2" were measured again there (the agent,
# daemon and cli bridges and every law), and agent/inflight.py (100%) and agent/tools/schema.py (100%) are no longer held.
# Eight wire modules are no longer held: the infer laws' malformed and odd-framing replies took in
# events each API allows that carry nothing of the reply (Anthropic's redacted thinking and unknown
# delta types, Bedrock's redacted reasoning and citation deltas), an SSE CR LF split over two reads,
# Codex's response.done, Ollama's calls with object arguments, a chat stream closed after its
# finish_reason with no [DONE]; the failures before a reply took in unreadable retry hints, an Azure
# resource name that is no DNS label and Bedrock with no credentials; the forced calls offer a tool
# with a description. The event-stream encoder moved to the loopback server (the product only reads
# frames) and the wire's base classes are abstract (no `raise NotImplementedError` bodies). By the
# infer laws alone: anthropic 95.96%, azure 97.78%, base 95.20%, bedrock 95.07% (before the
# description and the credentials), eventstream 97.20%, codex 98.25%, sse 100%; by the infer,
# compactor and turn laws: openai_chat 95.42%, bedrock 96.55%.
# The chat memory's store is no longer held: the optchat_store bridge's scenario 300 finds its
# index.bin taken by a directory (neither read nor written again: the lines that read and write the
# cache's failures), the transcript unchanged.
# The chat memory's fold is no longer held: the store laws took in stores that lost lines (a short
# message's node, a node's half, merged nodes, the message log's end, what view.json shows), each
# refused naming its file and line and writing nothing, the last short message's node a crash cut,
# and a view.json of an earlier view of the log: fold.py 100% by the store laws alone.
# The agent's daemon is no longer held: the daemon bridge took in a turn loop that emits from a
# thread of its own and an event the protocol does not have and ignores its abort (cancelled as the
# agent ends), a client serve started with its stdin closed, a connection that does not read as the
# agent ends, and a request of the relay its agent never answered (96.35% by the clean-clone CI of
# b019b9c's data with those four scenarios replayed under coverage). The command line's cli.py and
# commands/tui.py are no longer held: the command-line bridge took in an agent dir where no directory
# can be made (/sys: the read-only hint) and the full-screen client left at once on a terminal, with
# no session and with the one it made (cli.py 95.29%, commands/tui.py 100% once its handler of an
# unreachable agent, which the client itself shows, was removed as dead).
# Three tiny-model modules are no longer held: the tiny laws took in Kokoro's leading punctuation,
# bare marks, a word past a piece and a graph of another signature (kokoro.py 100%), worker faults
# of resets, an unasked line and other tags gone or saying bye (client.py 95.97%, 98.79% with the
# tiny bridge), and the sweep's leftovers that cannot be removed or another sweep removed first
# (paths.py 97.37%), by the tiny laws alone.
# The session's lock, log and private files and the settings writers are no longer held: the session
# laws took in every tail a crash leaves after a log's cut line and lines no crash leaves, a write
# the file system cuts (RLIMIT_FSIZE: EFBIG), a log whose directory cannot be synced (RLIMIT_NOFILE:
# EMFILE), a second writer that waits, a store under a file, new/.. and, where the process may set
# it, an append-only directory refusing a replace; the rmw laws took in settings files through links,
# link loops, another owner (as root), 0600 files and a cut write; the index law a temporary file a
# crash left and a directory in the index's place. By the session, config, cvar and store laws
# alone: private.py 97.50% (95.00% where the append-only case cannot run), log.py 99.24%, lock.py
# 98.57%, files.py 97.73%.
# Six more are no longer held (2026-12-05): chat.py (an agent killed mid-turn and mid-command, /agent
# answered while a turn runs, a session dir made meanwhile: 95.30% by the cli bridge), memory_cache.py (its wait for the view is the
# compactor's idle, not a wall-clock timeout, and its body readers lost branches for shapes the
# Anthropic client never sends: 96.02% by the cli bridge's --cache scenarios), login.py (the key
# typed on a terminal: 100%), pool.py (a request through a closed pool: 100% by the infer laws),
# view.py (the choice of the core's form judged by the memory laws: 100%) and tiny/download.py
# (faults the file system and the server make real: 95.90% by the download laws, as root where the
# append-only flag can be set).
# Three more are no longer held (2026-12-05), each at least two covered lines over the floor in
# the clean-clone CI of 69aeb75: agent/client.py 98.41%, corebuild.py 97.78%, memory/turn.py
# 95.79%. The others below measured over 95% there too, by less than two lines of their module.
MODULE_HELD: dict[str, float] = {
    "agent/reach.py": 91.0,  # 95.74% of 47 at 69aeb75
    "agent/subagents.py": 94.0,  # 95.22% of 209 at 69aeb75
    "agent/tools/bash.py": 94.0,  # 95.90% of 122 at 69aeb75
    "commands/laws.py": 91.0,  # 92.92% of 113
    "tiny/worker.py": 94.0,  # 95.33% of 321 at 69aeb75
    "tui/dictation.py": 94.0,  # 95.63% of 206 at 69aeb75, by the terminal UI's own judges
}


def floor_of(area: str, floor: float) -> float:
    """The floor ``area`` must meet when the run's floor is ``floor`` (0 checks nothing)."""
    return min(floor, HELD.get(area, floor))


def module_floor_of(module: str, floor: float) -> float:
    """The floor ``module`` (relative to impl/eukhe) must meet when the run's floor is ``floor``."""
    return min(floor, MODULE_HELD.get(module, floor))


def area_of(relative: str) -> str | None:
    """The production area of a path relative to impl/eukhe, or None (cli, commands, ...)."""
    for area, parts in AREAS.items():
        if any(relative == p or (p.endswith("/") and relative.startswith(p)) for p in parts):
            return area
    return None


class _Measured:
    """coverage.py's branch-coverage percentage of a module or an area: covered lines and
    branches over all."""

    statements: int
    branches: int
    covered_statements: int
    covered_branches: int

    @property
    def percent(self) -> float:
        total = self.statements + self.branches
        return 100.0 if total == 0 else 100.0 * (self.covered_statements + self.covered_branches) / total


@dataclass(frozen=True)
class ModuleCoverage(_Measured):
    module: str  # relative to impl/eukhe
    area: str
    statements: int
    branches: int
    covered_statements: int
    covered_branches: int
    judges: str = LAWS_AND_BRIDGES


@dataclass(frozen=True)
class AreaCoverage(_Measured):
    area: str
    files: int
    statements: int
    branches: int
    covered_statements: int
    covered_branches: int
    judges: str = LAWS_AND_BRIDGES


def coverage_by_module(data_file: Path, own: dict[str, tuple[str, Path]] | None = None) -> list[ModuleCoverage]:
    """coverage.py's JSON report per production module. Modules that the laws never imported
    are in the report too (``source`` in pyproject.toml), wholly uncovered. The modules of an
    area of ``own`` (its judges, their data file) are taken from that file alone (wholly
    uncovered when the file is missing)."""
    rows = _by_module(data_file)
    for area, (judges, own_file) in (own or {}).items():
        measured = {r.module: r for r in _by_module(own_file)} if own_file.exists() else {}
        rows = [
            replace(measured.get(r.module, replace(r, covered_statements=0, covered_branches=0)), judges=judges) if r.area == area else r
            for r in rows
        ]
    return rows


def coverage_by_area(data_file: Path, own: dict[str, tuple[str, Path]] | None = None) -> list[AreaCoverage]:
    """The modules' coverage summed per area (see coverage_by_module)."""
    return area_totals(coverage_by_module(data_file, own))


def area_totals(modules: list[ModuleCoverage]) -> list[AreaCoverage]:
    areas: dict[str, list[ModuleCoverage]] = {}
    for m in modules:
        areas.setdefault(m.area, []).append(m)
    return [
        AreaCoverage(
            area,
            len(rows),
            sum(r.statements for r in rows),
            sum(r.branches for r in rows),
            sum(r.covered_statements for r in rows),
            sum(r.covered_branches for r in rows),
            rows[0].judges,
        )
        for area, rows in sorted(areas.items())
    ]


def _by_module(data_file: Path) -> list[ModuleCoverage]:
    import tempfile

    import coverage

    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "coverage.json"
        cov.json_report(outfile=str(out), include=[str(PACKAGE / "*")])
        files: dict[str, dict[str, dict[str, int]]] = json.loads(out.read_text(encoding="utf-8"))["files"]
    rows = []
    for name, record in sorted(files.items()):
        try:
            relative = (ROOT / name).resolve().relative_to(PACKAGE.resolve()).as_posix()
        except ValueError:
            continue
        area = area_of(relative)
        if area is None:
            continue
        summary = record["summary"]
        rows.append(
            ModuleCoverage(relative, area, summary["num_statements"], summary["num_branches"], summary["covered_lines"], summary["covered_branches"])
        )
    return rows


def write_coverage(modules: list[ModuleCoverage], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "coverage.json"
    document = {
        "measure": "branch coverage of impl/eukhe by tests/laws and tests/bridge alone; an area the seeds give no model, by its own judges (judges)",
        "floor": FLOOR,
        "held": HELD,
        "module_held": MODULE_HELD,
        "areas": [asdict(r) | {"percent": round(r.percent, 2)} for r in area_totals(modules)],
        "modules": [asdict(m) | {"percent": round(m.percent, 2)} for m in modules],
    }
    target.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return target


def _coverage(args: argparse.Namespace) -> int:
    modules = coverage_by_module(Path(args.data), {area: (judges, ROOT / data) for area, (judges, data) in OWN_JUDGES.items()})
    rows = area_totals(modules)
    write_coverage(modules, Path(args.laws_dir))
    from spec import report

    report.refresh(Path(args.laws_dir))
    low = [r.area for r in rows if r.percent < floor_of(r.area, args.floor)]
    for r in rows:
        floor = floor_of(r.area, args.floor)
        mark = f"BELOW {floor:g}%" if r.percent < floor else "ok" if r.percent >= args.floor else f"held at {floor:g}% (floor {args.floor:g}%)"
        judged = "" if r.judges == LAWS_AND_BRIDGES else f"  (by {r.judges.split(':')[0]})"
        print(f"coverage {r.area:<10} {r.percent:6.2f}%  ({r.files} files, {r.statements} statements, {r.branches} branches)  {mark}{judged}")
    for m in modules:
        floor = module_floor_of(m.module, args.floor)
        if m.percent < floor:
            low.append(m.module)
            print(f"coverage   {m.module:<32} {m.percent:6.2f}%  BELOW {floor:g}%")
        elif m.percent < args.floor:
            print(f"coverage   {m.module:<32} {m.percent:6.2f}%  held at {floor:g}% (floor {args.floor:g}%)")
    if low:
        print(f"coverage by its judges below the floor in: {', '.join(low)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.binding", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cov = sub.add_parser("coverage", help="per-area branch coverage of production by laws and bridges")
    cov.add_argument("--data", default=".coverage", help="coverage.py data file")
    cov.add_argument("--laws-dir", default="build")
    cov.add_argument("--floor", type=float, default=FLOOR)
    cov.set_defaults(run=_coverage)
    args = parser.parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
