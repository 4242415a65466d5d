"""`make mutate [AREA=..] [QUEUE=redis://HOST:PORT]`: the mutation score of production code, from mutmut.

For each production area (spec.binding.AREAS) a workspace under build/mutate/<area>/ holds
a copy of the tracked project files and a pyproject.toml whose [tool.mutmut] section mutates
only that area's modules, judged by the suites of `make test` that concern the area (its
laws, its bridges' production checks and its tests: area_judges). mutmut keeps
its results there between runs (a rerun retests only what changed). The outcome per area,
killed / survived / equivalent (spec/equivalent_mutants.tsv: a mutant name and why no test
can tell it apart) and the survivors by name, goes to build/mutation.json, which the law
report shows.

Never part of `make test`: it runs the suites once per mutant. `--record` keeps the measured
scores in spec/mutation_scores.json (tracked, shown by the report with the commit measured).

How mutmut 3 runs the judges: pytest in its own process (the stats run, which records which
test calls which function, then a clean run), then one forked child per mutant, which switches
its mutant on and reruns the tests that called the mutated function. Code that runs only at
import is therefore never mutated, and a value built on first use and kept (a functools.cache)
would be built once in the parent, before any mutant is on, and inherited by every child. So
production builds its tables in functions (settings/cvar_table.table(), registry(), the command
line's parser, the shipped rulebook, the compiled catalog), and under
mutation this module is also a pytest plugin (``-p spec.mutate``) whose autouse fixture forgets
those kept values before each test (LAZY): each test builds them afresh, as a fresh process
would, under the mutant of its child, and the stats run ties the builders to every test that
reads them.

The type check comes first (spec/mutate_types.py, mutmut's type_check_command): each mutant the
run judges is written into its module and mypy --strict, the project's configuration, checks that
module as `make test` would; a mutant it refuses is "caught by type check", counted killed, and
its judges do not run. (Not mypy over mutmut's mutated files: their trampolines change what a
caller sees of a function, a TypeGuard's narrowing for one, and give errors no mutant made.)

python -m spec.mutate [--area AREA ...] [--max-children N] [--report-only] [--record]
                      [--only MODULE ...] [--mutants NAME ...] [--sample N [--seed S]] [--rest N [--seed S]] [--untraced [--survivors]]
                      [--queue redis://HOST:PORT[/DB] [--batch N] [--job-timeout S] [--deadline S]]
python -m spec.mutate worker --queue redis://HOST:PORT[/DB] [--checkout DIR] [--max-children N] [--burst]

--queue farms the run to workers through a task queue (spec/mutate_queue.py: RQ on the Redis
server the hunts share), a whole memory run being about a day on two cores. This process, in a
checkout whose tracked files are its commit's, chooses the mutants as above and enqueues them in
jobs of --batch names (one area, one commit); each worker, in a checkout of its own at that commit
(`make mutate-worker QUEUE=...` there, any machine), judges a job with the machinery of the
one-process run (the area's workspace in its checkout, `mutmut run` of the job's names, the type
check included) and refuses a job of another commit, naming both. The verdicts come back into this
checkout's workspace, so build/mutation.json and --record read them as after a one-process run
(with which workers judged how many). tests/workbench/test_mutate_queue.py checks that two workers
agree with one process, mutant by mutant.

--sample N draws N of the area's mutants with random.Random(S) (seed 9 unless --seed) when a
whole run cannot finish in the time at hand: its kill rate is recorded as a sample (its size,
seed and the number drawn from beside it), never as the area's score, with its 95% Wilson interval.
random.sample's draws of 2N begin with its draws of N (same seed), so a sample grows by rerunning
with a larger N; mutmut keeps the stats pass of the workspace, so only the new mutants cost much.

--untraced then judges the run's "no tests" mutants with every judge of the area: code that runs
only in the processes the judges start has no judge in mutmut's stats pass (judge_untraced).
--survivors also judges the run's survivors so: mutmut ran against each only the judges that
call its function in the test process, and a judge running it in a process of its own (an
`eukhe` command) may tell it apart.

--rest N ends a whole run that cannot finish: the mutants the workspace has judged are a census
(exact, whatever order mutmut judged them in), the ones it has not are the rest, and N of the rest
drawn uniformly (random.Random(S)) are run (with the --mutants given, e.g. the census's survivors to
rerun). The area's score is then estimated, never called measured: exact over the census, the
rest's kill rate from the draw, its 95% Wilson interval carried over to the whole area (estimate).

Where the time goes (measured, see RUN_SETTINGS and the record's timing): mutmut's stats pass
(the judges once, every call of the area traced) and its clean run (the sampled mutants' judges
once, plain) take minutes; a killed mutant takes about a second (mutmut runs its judges with
pytest -x, fastest first here); a survivor runs all its judges. Fewer Hypothesis examples under
mutation would only shorten the survivors' runs, by weakening exactly the verdicts they get: not
done.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from spec import mutate_types
from spec.binding import AREAS, ROOT

EQUIVALENT = ROOT / "spec" / "equivalent_mutants.tsv"
ALSO_COPY = ["conftest.py", "spec", "bend", "bridge", "scenarios", "tests", "benchmarks", "impl", "README.md"]  # the README: the command line's tests read its exit codes
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
UNCHECKED = {"not checked", "check was interrupted by user", "skipped"}


JUDGES = ["tests", "--ignore=tests/workbench"]

# The suites of make test that concern each area: its laws (spec/laws/<law area>.py), its
# bridges (bridge/<law area>.py, the four checks of tests/bridge) and its regression tests.
LAW_AREAS: dict[str, tuple[str, ...]] = {
    "effort": ("effort",),
    "settings": ("cvar", "config"),
    "directors": ("director", "progress"),
    "session": ("session",),
    "memory": ("optchat", "optchat_store", "chat_store", "compactor"),
    "inference": ("infer", "catalog_union", "default_model"),
    "tiny": ("tiny",),
    "cli": ("cli",),  # no law names the command line: its bridge (bridge/cli.py) and its tests judge it
    # The loop bridge and the daemon bridge (the agent process's requests). The daemon bridge once
    # failed in the workspace: mutmut's copies of a mutated method became members of the
    # runtime_checkable Protocol Remembers, so no runner was one; every Protocol of production is
    # now kept out of mutation (tests/workbench/test_mutate_protocols.py).
    "agent": ("agent", "daemon"),
    "tui": (),  # no law and no bridge names the terminal UI: its tests in real terminals judge it
}
# Laws of another area that run this area's code: the turn law (area optchat) judges the agent's
# one turn loop with its chat context (eukhe.agent.loop, eukhe.agent.chat).
LAWS_ACROSS: dict[str, tuple[str, ...]] = {
    "agent": ("optchat/turn_starts_from_the_view",),
}
TEST_DIRS: dict[str, tuple[str, ...]] = {
    "effort": ("tests/effort",),
    "settings": ("tests/settings",),
    "directors": ("tests/directors",),
    "session": ("tests/session", "tests/cli/test_cli_session.py"),
    "memory": ("tests/memory", "tests/memory_store", "tests/turn", "tests/compactor", "tests/cli/test_cli_memory.py"),
    "inference": ("tests/inference", "tests/wire"),
    "tiny": ("tests/tiny",),
    # The command line's tests, and the tests of its commands kept beside the area they speak of
    # (each runs an `eukhe` command: the cache measure, directors simulate, memory simulate, the
    # memory store's commands, the session commands, ask).
    "cli": (
        "tests/cli", "tests/compactor/test_compactor_cache.py", "tests/directors/test_simulate.py",
        "tests/memory/test_memory_simulate.py", "tests/memory_store/test_memory_cli.py",
        "tests/session/test_session_cli.py", "tests/wire/test_wire_ask.py",
    ),  # fmt: skip
    "agent": ("tests/agent",),
    "tui": ("tests/tui",),
}
# The bridge checks that run production: the replay of every committed scenario (production's
# transcript against the committed digest) and the case classification. Left out as judges:
# test_bridge_scenarios_are_current (regenerates the scenario files; production never runs) and
# test_bridge_through_an_external_model (the same production replay as the first check, with
# the model side in one subprocess per scenario: no more power over production, and the
# costliest test of each area under mutation).
BRIDGE_CHECKS = (
    "test_bridge_replays_byte_for_byte",
    "test_bridge_reaches_every_case",
)


def area_judges(area: str) -> list[str]:
    """The pytest selection judging the mutants of one area: node ids of its laws and its
    bridges' checks, and its test directories."""
    from spec import registry

    laws = [law.key for law in registry.load() if law.area in LAW_AREAS[area] or law.key in LAWS_ACROSS.get(area, ())]
    bridges = [a for a in LAW_AREAS[area] if (ROOT / "bridge" / f"{a}.py").exists()]
    return (
        [f"tests/laws/test_laws.py::test_law[{key}]" for key in laws]
        + [f"tests/bridge/test_bridge.py::{check}[{b}]" for b in bridges for check in BRIDGE_CHECKS]
        + list(TEST_DIRS[area])
    )


# Values production builds on first use and keeps ("module:function" of a functools.cache):
# forgotten before each test under mutation (the plugin below), so that every test builds them
# with the mutant of its child switched on.
# A kept value left out was built in the parent before any mutant was on: the mutants of what
# builds it (the command line's parser: every command's register) were judged against the
# original (tests/workbench/test_mutate_workspace.py: every functools cache of production is here).
LAZY = (
    "eukhe.settings.cvar_table:table",
    "eukhe.settings.cvar_table:registry",
    "eukhe.cli:parser",
    "eukhe.inference.quirks:shipped",
    "eukhe.inference.catalog:compiled",
    "eukhe.inference.wire.base:tls",
    "eukhe.agent.tools.schema:_validator",
)


def forget_lazy_values() -> None:
    """Clear the kept values of LAZY (the modules not yet imported are skipped)."""
    for entry in LAZY:
        module_name, _, function = entry.partition(":")
        module = sys.modules.get(module_name)
        if module is not None:
            getattr(module, function).cache_clear()


try:
    import pytest
except ImportError:  # pragma: no cover - the plugin is only loaded by pytest
    pass
else:

    @pytest.fixture(autouse=True)
    def _mutmut_fresh_lazy_values() -> None:
        """The pytest plugin of a mutation run (``-p spec.mutate``): see LAZY."""
        forget_lazy_values()

    def pytest_configure(config: pytest.Config) -> None:
        """In the stats pass, the processes the tests start (``python -m eukhe`` in a temporary
        project) run the plain code: mutmut's marker ``stats`` leaves the environment they
        inherit. This process keeps recording, as mutmut also holds the marker in its own state;
        a child could not (its trampolines would look for mutmut's configuration in the child's
        working directory), and its calls would not reach the stats anyway. Under a mutant the
        marker is the mutant's name, and the children run the mutant too; and a bridge's replay
        ends at its first mismatch (bridge.core.STOP_AT_FIRST_MISMATCH): the mutant is killed
        by then, and the scenarios after it would only take time."""
        if os.environ.get("MUTANT_UNDER_TEST") == "stats":
            del os.environ["MUTANT_UNDER_TEST"]
        if "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", ""):
            import bridge.core

            bridge.core.STOP_AT_FIRST_MISMATCH = True

    def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
        """In a mutant's run, its judges go fastest first (durations of the stats pass).

        mutmut runs a mutant's judges with ``-x`` (the first failure ends the run and kills the
        mutant) in the order of a set; fastest first ends a killed mutant's run sooner. The
        verdict does not change: a mutant survives only if every judge passes, in any order
        (the judges share no state: each builds its values afresh, see LAZY)."""
        if "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", ""):
            items.sort(key=lambda item: judge_seconds().get(item.nodeid, float("inf")))


def judge_seconds() -> dict[str, float]:
    """Each judge's duration in the stats pass (mutmut's state, inherited by the mutant's child)."""
    try:
        from mutmut.state import state
    except ImportError:  # pragma: no cover - only under mutmut
        return {}
    return dict(state().duration_by_test)


# A mutant's run ends as a timeout (counted killed, mutmut's convention) past
# ceil((E + TIMEOUT_CONSTANT) * TIMEOUT_MULTIPLIER * 2) CPU seconds, E the wall seconds its
# judges took in the stats pass (traced, about 3x a plain run): mutmut's defaults (15, 1)
# let a mutant that loops forever under a 64 s judge burn 32 CPU minutes.
TIMEOUT_MULTIPLIER = 2.0
TIMEOUT_CONSTANT = 10.0
RUN_SETTINGS = {
    "fail_fast": "mutmut runs each mutant's judges with pytest -x: the first failure kills it (a bridge's replay ends at its first mismatch)",
    "order": "a mutant's judges run fastest first (their stats-pass durations)",
    "timeout": f"a mutant's run past ceil((E + {TIMEOUT_CONSTANT:g}) * {TIMEOUT_MULTIPLIER:g} * 2) CPU seconds "
    "(E: its judges' seconds in the stats pass) is a timeout, counted killed",
    "hypothesis": "the laws profile, as in make test (no fewer examples under mutation)",
    "type_check": "mypy --strict (the project's configuration) on each mutant applied to its module, first: "
    "a mutant it refuses is caught by type check, counted killed, and its judges do not run",
}


DEBUG = False  # --debug: mutmut prints each pytest run's output (its errors included)


def _mutmut_config(area: str, judges: list[str], only: list[str] | None = None) -> str:
    patterns = [f"eukhe/{p}*" if p.endswith("/") else f"eukhe/{p}" for p in (only or AREAS[area])]
    lines = [
        "[tool.mutmut]",
        'source_paths = ["eukhe"]',
        f"only_mutate = {json.dumps(patterns)}",
        f"also_copy = {json.dumps(ALSO_COPY)}",
        # the plugin that forgets the values production keeps (LAZY) before each test
        'pytest_add_cli_args = ["-p", "spec.mutate"]',
        # the judges: the suites of make test that concern the area (area_judges)
        f"pytest_add_cli_args_test_selection = {json.dumps(judges)}",
        f"debug = {'true' if DEBUG else 'false'}",
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}",
        f"timeout_constant = {TIMEOUT_CONSTANT}",
        # mypy --strict refuses a mutant: caught by type check (spec/mutate_types.py)
        f"type_check_command = {json.dumps(mutate_types.command())}",
    ]
    return "\n".join(lines) + "\n"


def _workspace(area: str, judges: list[str], only: list[str] | None = None) -> Path:
    """Lay the tracked files into build/mutate/<area>/, keeping mutmut's mutants/ results.

    mutmut names a mutant by its file's path from the workspace root and looks for sources
    in ./, src/ or source/, so the package is laid at the root as eukhe/ (a copy of
    impl/eukhe/), where its module names and its mutants' names agree."""
    space = ROOT / "build" / "mutate" / area
    space.mkdir(parents=True, exist_ok=True)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = space / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            if name.startswith("impl/eukhe/"):
                flat = space / name.removeprefix("impl/")
                flat.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, flat)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (space / "pyproject.toml").write_text(pyproject + "\n" + _mutmut_config(area, judges, only), encoding="utf-8")
    return space


def unselectable(node_ids: list[str]) -> list[str]:
    """The node ids pytest cannot select again by their id: "::" inside the parameters (pytest
    splits the id there and answers "not found" with exit code 4). mutmut reruns every judge by
    its node id (the clean run, each mutant's run), so one such id stops the whole run."""
    return [n for n in node_ids if "[" in n and "::" in n[n.index("[") :]]


def _check_judges(judges: list[str]) -> None:
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *judges],
        cwd=ROOT, capture_output=True, text=True, check=False,
    ).stdout.splitlines()
    bad = unselectable([line for line in collected if "::" in line])
    if bad:
        raise SystemExit("judges with node ids mutmut cannot select (give them plain ids): " + "; ".join(bad))


GENERATE = """
import os, sys
sys.argv = ["mutmut", "run"]
from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants, set_mutant_under_test
from mutmut.utils.file_utils import setup_source_paths
set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(1)
"""


def _environment(space: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(space / "mutants")  # subprocesses of the tests import the mutants too
    env.setdefault("HYPOTHESIS_PROFILE", "laws")
    return env


def draw_sample(area: str, size: int, seed: int, only: list[str] | None = None) -> tuple[list[str], int]:
    """A seeded sample of the area's mutants (``size`` of them, drawn by random.Random(seed)
    from the sorted names of every mutant mutmut generates for the area's modules) and the
    number drawn from (run_area has generated them: mutmut's own generation, nothing run)."""
    import random

    names = sorted(results(area))
    if only:
        modules = tuple("eukhe." + p.removesuffix(".py").removesuffix("/").replace("/", ".") + "." for p in only)
        names = [n for n in names if n.startswith(modules)]
    return sorted(random.Random(seed).sample(names, min(size, len(names)))), len(names)


def draw_rest(area: str, size: int, seed: int) -> tuple[list[str], int]:
    """A seeded uniform draw of ``size`` of the area's mutants its workspace has not judged yet
    (the rest of a whole run that stopped part-way), and how many there were."""
    import random

    names = sorted(n for n, s in results(area).items() if s in UNCHECKED)
    return sorted(random.Random(seed).sample(names, min(size, len(names)))), len(names)


def estimate(
    census_killed: int, census_judged: int, draw_killed: int, draw_judged: int, draw_size: int, rest: int
) -> dict[str, object]:
    """The area's score from a census of part of it and a uniform draw from the rest.

    The census is exact: ``census_killed`` of its ``census_judged`` non-equivalent mutants.
    The rest (``rest`` mutants) is estimated from the draw: ``draw_killed`` of its
    ``draw_judged`` non-equivalent ones (``draw_size`` drawn), so the rest holds about
    rest * draw_judged / draw_size non-equivalent mutants, killed at the draw's rate. Only the
    draw's rate is uncertain: its 95% Wilson interval, put in place of the rate, bounds the
    score (the draw is without replacement, so the interval is if anything wide)."""
    rest_judged = rest * draw_judged / draw_size if draw_size else 0.0
    total = census_judged + rest_judged

    def score(rate: float) -> float:
        return round(100 * (census_killed + rest_judged * rate) / total, 2) if total else 0.0

    low, high = wilson(draw_killed, draw_judged)
    return {
        "census": {"killed": census_killed, "judged": census_judged},
        "rest": {"mutants": rest, "drawn": draw_size, "killed": draw_killed, "judged": draw_judged},
        "score_estimate": score(draw_killed / draw_judged if draw_judged else 0.0),
        "score_wilson95_percent": [score(low / 100), score(high / 100)],
    }


def prepare_area(
    area: str, judges: list[str], mutants: list[str] | None = None, only: list[str] | None = None,
    sample: tuple[int, int] | None = None, rest: tuple[int, int] | None = None, *, generate: bool = False,
    check: bool = True,
) -> tuple[Path, list[str] | None]:
    """Lay the area's workspace and choose the mutants a run judges: those named, a seeded sample
    or a draw from the rest; None for a whole run (every mutant mutmut has not judged yet).
    ``generate`` generates the mutants first even when the workspace has results (a queued run
    lists them itself); ``check`` collects the judges first (see unselectable)."""
    if check:
        _check_judges(judges)
    judged_at = _commit()  # the tree the run judges: taken as the workspace is laid, not after (edits may follow)
    space = _workspace(area, judges, only)
    if generate or sample is not None or rest is not None or not results(area):
        # Generate the mutants of the tree as it is now in a process of their own first (mutmut
        # regenerates only the changed files and keeps the other results): a draw is then made
        # from the mutants this run judges, never from those of code changed since. (The first
        # `mutmut run` of a fresh workspace, generating in its own process, has also failed its
        # stats run with pytest's exit code 4; with the mutants generated beforehand it has not.)
        # Otherwise `mutmut run` generates them itself.
        subprocess.run([sys.executable, "-c", GENERATE], cwd=space, env=_environment(space), check=True, capture_output=True)
    if sample is not None:
        mutants, drawn_from = draw_sample(area, *sample, only=only)
        SAMPLES[area] = {"size": len(mutants), "seed": sample[1], "drawn_from": drawn_from, "mutants": mutants}
        (space / "sample.json").write_text(json.dumps(SAMPLES[area], indent=1) + "\n", encoding="utf-8")
    elif rest is not None:
        drawn, drawn_from = draw_rest(area, *rest)
        SAMPLES[area] = {"kind": "rest", "size": len(drawn), "seed": rest[1], "drawn_from": drawn_from, "mutants": drawn}
        (space / "sample.json").write_text(json.dumps(SAMPLES[area], indent=1) + "\n", encoding="utf-8")
        mutants = [*(mutants or []), *drawn]
    elif not mutants:  # a whole run: no longer a sample
        (space / "sample.json").unlink(missing_ok=True)
    (space / "measured_at.txt").write_text(judged_at + "\n", encoding="utf-8")
    (space / QUEUED).unlink(missing_ok=True)  # a queued run writes it again once its verdicts are in
    return space, mutants


def run_mutmut(space: Path, max_children: int, mutants: list[str] | None, log: Path | None = None) -> int:
    """``mutmut run`` in a workspace (the named mutants, else every one not yet judged); its
    output goes to ``log`` when given. Its exit code."""
    mutmut = Path(sys.executable).parent / "mutmut"
    argv = [str(mutmut), "run", "--max-children", str(max_children), *(mutants or [])]
    # the mutants its type check checks: these, or (null) every one not judged yet, as mutmut runs
    (space / mutate_types.TYPE_CHECK_NAMES).write_text(json.dumps(mutants or None) + "\n", encoding="utf-8")
    if log is None:
        return subprocess.run(argv, cwd=space, env=_environment(space), check=False).returncode
    with log.open("w", encoding="utf-8") as out:
        return subprocess.run(argv, cwd=space, env=_environment(space), stdout=out, stderr=subprocess.STDOUT, check=False).returncode


def run_area(
    area: str, max_children: int, judges: list[str], mutants: list[str] | None = None, only: list[str] | None = None,
    sample: tuple[int, int] | None = None, rest: tuple[int, int] | None = None,
) -> int:
    space, mutants = prepare_area(area, judges, mutants, only, sample, rest)
    return run_mutmut(space, max_children, mutants)


# mutmut's exit code of a mutant whose function no judge called in the stats pass ("no tests").
NO_TESTS = 33
UNTRACED = "untraced.json"


def judge_untraced(area: str, judges: list[str], deadline: float = 3600.0, *, survivors: bool = False) -> dict[str, str]:
    """Judge the "no tests" mutants of the area's last run with every judge of the area.

    The stats pass ties a function to the judges that call it in the test process. Code that
    runs only in the processes the judges start (the tiny worker, the agent process, a
    subagent's child) is called by no judge there, so mutmut marks its mutants "no tests" and
    runs nothing, though the judges do run that code. Here each such mutant of the run (the
    sample's, when the run was one) gets the area's judges, as mutmut would run them: pytest
    -x in the workspace's mutants/ (so the processes the judges start import the mutants too)
    with the mutant switched on. Its verdict goes where mutmut keeps its own (the .meta
    files): pytest's exit code 1 (a judge failed) kills it, 0 lets it survive; a run past
    ``deadline`` seconds, or any other exit code, leaves it "no tests" and is reported.
    With ``survivors``, the mutants that survived mutmut's run are judged the same way: mutmut
    ran only the judges its stats pass saw call the mutated function in the test process, so a
    judge that runs it in a process of its own (an `eukhe` command) never ran against it. A
    mutant recorded as equivalent is left as it is.
    Returns each mutant judged and its outcome (build/mutate/<area>/untraced.json)."""
    space = ROOT / "build" / "mutate" / area
    drawn = sample_of(area)
    chosen = set(drawn["mutants"]) if drawn is not None else None  # type: ignore[call-overload]
    wanted, known = ({NO_TESTS, 0}, equivalents()) if survivors else ({NO_TESTS}, {})
    outcomes: dict[str, str] = {}
    for meta in sorted((space / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes: dict[str, int | None] = data.get("exit_code_by_key", {})
        for name in sorted(n for n, code in codes.items() if code in wanted and n not in known and (chosen is None or n in chosen)):
            env = _environment(space) | {"MUTANT_UNDER_TEST": name}
            argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "spec.mutate", *judges]
            try:
                done = subprocess.run(argv, cwd=space / "mutants", env=env, capture_output=True, check=False, timeout=deadline)
            except subprocess.TimeoutExpired:
                outcomes[name] = f"not judged: past {deadline:g} s"
                continue
            if done.returncode in (0, 1):
                codes[name] = done.returncode
                outcomes[name] = "killed" if done.returncode else "survived"
            else:
                outcomes[name] = f"not judged: pytest exit {done.returncode}"
            print(f"untraced {name}: {outcomes[name]}", flush=True)
        meta.write_text(json.dumps(data), encoding="utf-8")
    (space / UNTRACED).write_text(json.dumps(outcomes, indent=1) + "\n", encoding="utf-8")
    return outcomes


# The seeded samples drawn in this run (--sample), by area: what was measured, for the record.
SAMPLES: dict[str, dict[str, object]] = {}
# A queued run's account of who judged what (spec.mutate_queue), in the area's workspace.
QUEUED = "queued.json"


def equivalents() -> dict[str, str]:
    """Mutants no test can tell apart from the original, with the reason (one per line:
    mutant name, a tab, why)."""
    if not EQUIVALENT.exists():
        return {}
    found = {}
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition("\t")
            found[name.strip()] = why.strip()
    return found


def status_of(exit_code: int | None) -> str:
    """mutmut's status of a mutant's exit code (37: caught by type check; None: not checked)."""
    from mutmut.stats import status_by_exit_code

    return str(status_by_exit_code[exit_code])


def results(area: str) -> dict[str, str]:
    """mutant name -> mutmut status, from the .meta files of the area's workspace."""
    found: dict[str, str] = {}
    mutants = ROOT / "build" / "mutate" / area / "mutants"
    for meta in sorted(mutants.rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, code in data.get("exit_code_by_key", {}).items():
            found[name] = status_of(code)
    return found


def wilson(killed: int, judged: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a kill rate (percent, 2 decimals): what a seeded sample of
    ``judged`` mutants, ``killed`` of them killed, says about the kill rate of the whole area
    (valid for a uniform draw; a sample stopped part-way is not one, see record)."""
    if judged <= 0:
        return (0.0, 100.0)
    p = killed / judged
    denominator = 1 + z * z / judged
    centre = (p + z * z / (2 * judged)) / denominator
    half = z / denominator * (p * (1 - p) / judged + z * z / (4 * judged * judged)) ** 0.5
    return (round(100 * max(0.0, centre - half), 2), round(100 * min(1.0, centre + half), 2))


def timing(area: str, names: list[str]) -> dict[str, object]:
    """Where a run's time went: the stats pass (mutmut's CPU seconds, mutants/mutmut-stats.json)
    and each judged mutant's run (wall seconds from fork to verdict, the .meta files)."""
    mutants = ROOT / "build" / "mutate" / area / "mutants"
    found: dict[str, object] = {}
    stats = mutants / "mutmut-stats.json"
    if stats.exists():
        stats_time = json.loads(stats.read_text(encoding="utf-8")).get("stats_time")
        if stats_time is not None:
            found["stats_pass_cpu_s"] = round(float(stats_time), 1)
    durations: dict[str, float] = {}
    for meta in sorted(mutants.rglob("*.py.meta")):
        durations.update(json.loads(meta.read_text(encoding="utf-8")).get("durations_by_key", {}))
    seconds = sorted(durations[n] for n in names if n in durations)
    if seconds:
        found["mutant_runs"] = len(seconds)
        found["mutant_s_median"] = round(seconds[len(seconds) // 2], 1)
        found["mutant_s_mean"] = round(sum(seconds) / len(seconds), 1)
        found["mutant_s_max"] = round(seconds[-1], 1)
    return found


def summarize(area: str, statuses: dict[str, str], known: dict[str, str]) -> dict[str, object]:
    counts = Counter(statuses.values())
    judged_statuses = {n: s for n, s in statuses.items() if s not in UNCHECKED}
    equivalent = sorted(n for n, s in judged_statuses.items() if s not in KILLED and n in known)
    survived = sorted(n for n, s in judged_statuses.items() if s not in KILLED and n not in known)
    killed = sum(counts[s] for s in KILLED)
    judged = len(judged_statuses) - len(equivalent)
    score = round(100.0 * killed / judged, 2) if judged else 0.0
    return {
        "area": area,
        "mutants": len(statuses),
        "killed": killed,
        "survived": len(survived),
        "equivalent": len(equivalent),
        "unchecked": len(statuses) - len(judged_statuses),
        "score": score,
        "statuses": dict(sorted(counts.items())),
        "survivors": [{"mutant": n, "status": statuses[n]} for n in survived],
        "equivalents": [{"mutant": n, "why": known[n]} for n in equivalent],
    }


def sample_of(area: str) -> dict[str, object] | None:
    """The seeded sample last drawn for the area (build/mutate/<area>/sample.json), if the
    last run of the area was a sample."""
    path = ROOT / "build" / "mutate" / area / "sample.json"
    if not path.exists():
        return None
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def describe_sample(drawn: dict[str, object]) -> str:
    return (
        f"a sample, not the score: {drawn['size']} of the area's {drawn['drawn_from']} mutants, drawn by "
        f"random.Random({drawn['seed']}).sample over their sorted names (python -m spec.mutate --sample {drawn['size']} --seed {drawn['seed']})"
    )


def summarize_rest(area: str, statuses: dict[str, str], drawn: dict[str, object], known: dict[str, str]) -> dict[str, object]:
    """A whole run ended by --rest: the judged mutants outside the draw are the census, the
    draw stands for the rest it was drawn from; the score is an estimate (see estimate)."""
    # a drawn mutant of a function changed after the draw is gone from the area: the draw
    # stands for the rest by the ones that remain (a uniform draw of the remaining rest)
    in_draw = {str(n) for n in drawn["mutants"] if str(n) in statuses}  # type: ignore[attr-defined]
    gone = sorted(str(n) for n in drawn["mutants"] if str(n) not in statuses)  # type: ignore[attr-defined]
    drawn_from = int(str(drawn["drawn_from"])) - len(gone)
    census = summarize(area, {n: s for n, s in statuses.items() if n not in in_draw and s not in UNCHECKED}, known)
    draw = summarize(area, {n: statuses[n] for n in sorted(in_draw)}, known)
    judged = {n: s for n, s in statuses.items() if s not in UNCHECKED}
    entry = summarize(area, judged, known)
    entry.pop("score")
    entry["mutants"] = len(statuses)
    entry["unchecked"] = len(statuses) - len(judged)
    entry["timing"] = timing(area, sorted(judged))
    entry["estimate"] = estimate(*killed_judged(census), *killed_judged(draw), len(in_draw), drawn_from)
    entry["rest"] = describe_rest(drawn)
    if gone:
        entry["drawn_gone"] = gone
        entry["rest"] = (
            f"{entry['rest']}; {len(gone)} of the drawn are gone (their function changed after the draw), "
            f"the {len(in_draw)} left stand for the {drawn_from} of the rest left"
        )
    return entry


def killed_judged(summary: dict[str, object]) -> tuple[int, int]:
    """A summary's killed mutants and its judged non-equivalent ones (killed or survived)."""
    killed, survived = summary["killed"], summary["survived"]
    assert isinstance(killed, int) and isinstance(survived, int)
    return killed, killed + survived


def describe_rest(drawn: dict[str, object]) -> str:
    return (
        f"an estimate, not a measured score: the census of every mutant judged outside the draw, and {drawn['size']} drawn "
        f"by random.Random({drawn['seed']}).sample from the {drawn['drawn_from']} not yet judged "
        f"(python -m spec.mutate --rest {drawn['size']} --seed {drawn['seed']})"
    )


def write(areas: list[str], directory: Path) -> Path:
    known = equivalents()
    path = directory / "mutation.json"
    previous = json.loads(path.read_text(encoding="utf-8"))["areas"] if path.exists() else []
    by_area = {a["area"]: a for a in previous}
    for area in areas:
        statuses = results(area)
        drawn = sample_of(area)
        if drawn is not None and drawn.get("kind") == "rest":  # a census and a draw from the rest
            by_area[area] = summarize_rest(area, statuses, drawn, known)
            continue
        if drawn is not None:  # a seeded sample was measured: only its mutants count
            statuses = {n: statuses[n] for n in drawn["mutants"]}  # type: ignore[attr-defined]
        if statuses:
            by_area[area] = summarize(area, statuses, known)
            by_area[area]["timing"] = timing(area, sorted(statuses))
            if drawn is not None:
                entry = by_area[area]
                entry["sample"] = describe_sample(drawn)
                entry["sample_killed_percent"] = entry.pop("score")
                judged = int(entry["killed"]) + int(entry["survived"])
                entry["sample_wilson95_percent"] = list(wilson(int(entry["killed"]), judged))
    for area in areas:
        queued = ROOT / "build" / "mutate" / area / QUEUED
        if area in by_area:
            by_area[area].pop("queued", None)
            if queued.exists():  # the verdicts came from workers through the task queue
                by_area[area]["queued"] = json.loads(queued.read_text(encoding="utf-8"))
    document = {
        "engine": "mutmut",
        "judges": {a: describe_judges(a) for a in areas},
        "score": "killed / (mutants - equivalent); a timeout counts as killed",
        "areas": [by_area[a] for a in AREAS if a in by_area],
    }
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


RECORDED = ROOT / "spec" / "mutation_scores.json"


def describe_judges(area: str) -> str:
    laws = [j for j in area_judges(area) if j.startswith("tests/laws/")]
    bridges = sorted({j.rsplit("[", 1)[1].rstrip("]") for j in area_judges(area) if j.startswith("tests/bridge/")})
    return (
        f"{len(laws)} laws of {', '.join(LAW_AREAS[area] + LAWS_ACROSS.get(area, ())) or '(no law area)'}; bridges {', '.join(bridges) or '(none)'} "
        f"({' and '.join(BRIDGE_CHECKS)}); {', '.join(TEST_DIRS[area])}"
    )


def _commit() -> str:
    """HEAD, marked +uncommitted when tracked files differ from it."""
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    return commit + ("+uncommitted" if dirty else "")


def record(areas: list[str], directory: Path, only: list[str] | None = None, note: str | None = None) -> Path:
    """Commit-ready scores (spec/mutation_scores.json): make mutate is not part of CI, so the
    measured result is kept in the tree, each area marked with the commit it was measured at."""
    measured = json.loads((directory / "mutation.json").read_text(encoding="utf-8"))["areas"]
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    previous = json.loads(RECORDED.read_text(encoding="utf-8"))["areas"] if RECORDED.exists() else []
    by_area = {a["area"]: a for a in previous}
    # the commit each area's last run judged (written when the run started), else HEAD now
    measured_at = {
        a: (ROOT / "build" / "mutate" / a / "measured_at.txt").read_text(encoding="utf-8").strip()
        for a in areas
        if (ROOT / "build" / "mutate" / a / "measured_at.txt").exists()
    }
    for entry in measured:
        if entry["area"] not in areas:
            continue
        statuses = entry["statuses"]
        by_area[entry["area"]] = {
            "area": entry["area"],
            "modules": [f"impl/eukhe/{p}" for p in (only or AREAS[entry["area"]])],
            "commit": measured_at.get(entry["area"], commit + ("+uncommitted" if dirty else "")),
            "judges": describe_judges(entry["area"]),
            "mutants": entry["mutants"],
            "killed": entry["killed"],
            "survived": entry["survived"] - statuses.get("no tests", 0),
            "no_tests": statuses.get("no tests", 0),
            "equivalent": entry["equivalent"],
            "not_run": entry["unchecked"],
            "survivors": [s["mutant"] for s in entry["survivors"]],
            "timing": entry.get("timing", {}),
            "run": dict(RUN_SETTINGS),
        }
        if note:
            by_area[entry["area"]]["after"] = note
        untraced = ROOT / "build" / "mutate" / entry["area"] / UNTRACED
        if untraced.exists():  # the "no tests" mutants judged by every judge of the area (judge_untraced)
            by_area[entry["area"]]["untraced"] = json.loads(untraced.read_text(encoding="utf-8"))
        if "queued" in entry:  # judged by workers through the task queue (spec.mutate_queue)
            by_area[entry["area"]]["queued"] = entry["queued"]
        if "estimate" in entry:  # a census and a draw from the rest: an estimate, never called the score
            by_area[entry["area"]]["rest"] = entry["rest"]
            by_area[entry["area"]]["estimate"] = entry["estimate"]
        elif "sample" in entry:  # a seeded sample: its kill rate, never called the score
            by_area[entry["area"]]["sample"] = entry["sample"]
            by_area[entry["area"]]["sample_killed_percent"] = entry["sample_killed_percent"]
            by_area[entry["area"]]["sample_wilson95_percent"] = entry["sample_wilson95_percent"]
            if entry["unchecked"]:
                by_area[entry["area"]]["sample_caveat"] = (
                    f"{entry['unchecked']} of the sample not run: mutmut runs the mutants it estimates fastest first, "
                    "so the judged ones are not a uniform draw and the interval is only indicative"
                )
        else:
            by_area[entry["area"]]["score"] = entry["score"]
    document = {
        "engine": "mutmut 3 (python -m spec.mutate --area AREA --record)",
        "note": "score = killed / (mutants run - equivalent); a mutant no judge runs (no tests) counts as surviving; "
        "each area was measured at the commit shown, with the judges shown",
        "areas": [by_area[a] for a in AREAS if a in by_area],
    }
    RECORDED.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return RECORDED


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:  # a worker of queued runs, in its own checkout (spec.mutate_queue)
        from spec import mutate_queue

        return mutate_queue.worker_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m spec.mutate", description=__doc__.splitlines()[0])
    parser.add_argument("--area", action="append", choices=sorted(AREAS), help="only this area (repeatable)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--report-only", action="store_true", help="only summarize earlier runs")
    parser.add_argument("--laws-dir", default="build", type=Path)
    parser.add_argument("--only", nargs="+", help="mutate only these modules of the area (paths under impl/eukhe, e.g. settings/binds.py)")
    parser.add_argument("--mutants", nargs="+", help="rerun only these mutants (names as mutmut prints them), e.g. the survivors")
    parser.add_argument("--record", action="store_true", help="also write the scores to spec/mutation_scores.json (tracked)")
    parser.add_argument("--sample", type=int, metavar="N", help="run a seeded sample of N mutants of the area (not a score: recorded as a sample)")
    parser.add_argument("--rest", type=int, metavar="N", help="end a whole run that cannot finish: run N mutants drawn from those not yet judged, and estimate the score")
    parser.add_argument("--seed", type=int, default=9, help="the seed of --sample or --rest (random.Random(seed))")
    parser.add_argument("--note", help="with --record: what the record cannot say itself (how the sample relates to earlier ones)")
    parser.add_argument("--judges", nargs="+", help="pytest selection that judges the mutants (default: the area's laws, bridges and tests)")
    parser.add_argument("--untraced", action="store_true", help="then judge the run's \"no tests\" mutants with every judge of the area (code run only in processes the judges start: judge_untraced)")
    parser.add_argument("--survivors", action="store_true", help="with --untraced: judge the run's survivors with every judge of the area too (a judge that runs the code in a process of its own is not tied to it by mutmut's stats pass)")
    parser.add_argument("--debug", action="store_true", help="mutmut's debug output (every pytest run's own output)")
    parser.add_argument("--queue", metavar="redis://HOST:PORT[/DB]", help="farm the mutants to workers through this task queue (RQ on Redis): python -m spec.mutate worker")
    parser.add_argument("--batch", type=int, default=40, metavar="N", help="with --queue: mutants per job (sorted by name, so a job's mutants share their functions and judges)")
    parser.add_argument("--job-timeout", type=int, default=4 * 3600, metavar="S", help="with --queue: a job running longer fails (and is retried once)")
    parser.add_argument("--deadline", type=float, metavar="S", help="with --queue: give up after S seconds, cancelling the jobs not done")
    args = parser.parse_args(argv)
    global DEBUG
    DEBUG = args.debug
    areas = args.area or list(AREAS)
    failed = 0
    if not args.report_only:
        for area in areas:
            sample = (args.sample, args.seed) if args.sample else None
            rest = (args.rest, args.seed) if args.rest else None
            judges = args.judges or area_judges(area)
            if args.queue:
                from spec import mutate_queue

                failed |= mutate_queue.run_queued(
                    args.queue, area, judges, args.mutants, args.only, sample, rest,
                    batch=args.batch, job_timeout=args.job_timeout, deadline=args.deadline,
                )
            else:
                failed |= run_area(area, args.max_children, judges, args.mutants, args.only, sample, rest)
    if args.untraced:  # also after --report-only: the workspace's last run
        for area in areas:
            judge_untraced(area, args.judges or area_judges(area), survivors=args.survivors)
    path = write(areas, args.laws_dir)
    if args.record:
        record(areas, args.laws_dir, args.only, args.note)
    from spec import report

    report.refresh(args.laws_dir)
    for entry in json.loads(path.read_text(encoding="utf-8"))["areas"]:
        measure = (
            f"score {entry['score']:6.2f}%"
            if "score" in entry
            else f"ESTIMATE {entry['estimate']['score_estimate']:6.2f}% (95% {entry['estimate']['score_wilson95_percent']}%)"
            if "estimate" in entry
            else f"SAMPLE killed {entry['sample_killed_percent']:6.2f}% (95% Wilson {entry.get('sample_wilson95_percent')}%)"
        )
        print(
            f"mutation {entry['area']:<10} {measure}  killed {entry['killed']}, "
            f"survived {entry['survived']}, equivalent {entry['equivalent']}, not run {entry['unchecked']}"
            + (f"  ({entry['sample']})" if "sample" in entry else "")
            + (f"  ({entry['rest']})" if "rest" in entry else "")
            + f"  timing {entry.get('timing', {})}"
        )
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
