"""The CLI fuzzer (issue 10): Hypothesis draws argv for every subcommand (random text, bytes
that are not UTF-8, huge and negative numbers, deep JSON, bad paths, scripts) and an agent dir
state (missing, a regular file, under a file, read-only, corrupt documents, torn and corrupt
logs, a locked session), runs the command, and asserts:

- the exit status is 0, 1 or 2 (70 would be a bug the error path caught);
- no traceback, and a failure prints exactly one line on stderr;
- no document readable before the command is unreadable after it, and a document that could
  not be read before is byte for byte the same after (nothing is written over it).

The in-process test runs ``eukhe.cli.main`` with captured output: the active profile's number
of examples (300 under ``laws``, 20,000 under ``make hunt``). The process test runs a few
drawn cases as real processes with the raw bytes as arguments. Values with line breaks, and
huge floats, are drawn by the settings fuzzer below, which checks they read back.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning

from cli_world import cfg_state, check, environment, judge, snapshot, world

from eukhe import cli
from eukhe.settings.cvar_table import registry

# -- what is drawn ------------------------------------------------------------------------------

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines splits on each
SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=LINE_BREAKS), max_size=16)
RAW_BYTES = st.binary(min_size=1, max_size=8).map(lambda b: b.decode("utf-8", "surrogateescape"))
DEEP = st.sampled_from(["[" * 20_000 + "]" * 20_000, '{"a":' * 5_000 + "1" + "}" * 5_000, "[" * 101 + "]" * 101])
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | SAFE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SAFE_TEXT, inner, max_size=3),
    max_leaves=8,
).map(json.dumps)
ODD_JSON = st.sampled_from(["{", "[1,", "NaN", '{"a": NaN}', '{"a": Infinity}', '{"a": "\\ud800"}', "null", "[]", '""', "1e400"])
NUMBERS = st.sampled_from(["0", "1", "2", "-1", "-0", "1.5", "9" * 28, "-" + "9" * 40, "1" * 5000, "0x10", "١٢", " 3", "3 "])
WORDS = st.sampled_from(
    ["", " ", "main", "main.worker", "s1", "nosuch", "..", "../x", "true", "false", "off", "high", "max", "xhigh",
     "save", "set transport sse", "set retry.maxRetries 3; toggle retry.enabled", "alias a b", "set", "toggle",
     "retry.enabled", "retry.maxRetries", "defaultModel", "temperature", "transport", "retry.fallbackChains",
     "providerMaxInFlight", "mcpServers", "sessionDir", "/remind x", "-", "--", "--help"]
)
TEXT = st.one_of(WORDS, SAFE_TEXT, RAW_BYTES, NUMBERS, JSON_VALUE, ODD_JSON, DEEP)
PATHS = st.sampled_from(["{tmp}/nosuch", "{tmp}/a-file", "{tmp}/a-file/below", "{tmp}", "{agent}", "{agent}/sessions",
                         "/etc/passwd", "/dev/null", "{tmp}/x.png", "{tmp}/dir.png", "{tmp}/script.jsonl",
                         "{tmp}/sess\udcffions", "{tmp}/read-only", "", "."])
CVARS = st.sampled_from([d.id for d in registry()]) | WORDS
LEVELS = st.sampled_from(["off", "minimal", "low", "medium", "high", "xhigh", "max", "none", "HIGH", ""]) | TEXT
SCRIPT_LINES = st.one_of(
    st.sampled_from([
        '{"input": "hi"}', '{"goal": "g"}', '{"goal_status": "paused"}', '{"goal_status": "active"}',
        '{"goal_status": "bogus"}', '{"autonomous": true}', '{"command": "/remind r"}', '{"command": "/force bash --tries 2"}',
        '{"command": "/force"}', '{"reply": {"text": "ok"}}', '{"reply": {"text": "", "tool_calls": [{"name": "bash"}]}}',
        '{"reply": {"text": "t", "note": "n", "tool_calls": [{"name": "bash", "arguments": {"x": NaN}}]}}',
        '{"reply": {"text": 3}}', "[1]", "{", "", '{"input": "\\ud800"}',
    ]),
    JSON_VALUE,
    DEEP,
)
SCRIPT = st.one_of(
    st.lists(st.sampled_from(['{"input": "hi"}', '{"goal": "g"}', '{"goal_status": "paused"}', '{"goal_status": "active"}',
                              '{"reply": {"text": "ok"}}', '{"command": "/force bash"}', '{"command": "/remind r"}',
                              '{"autonomous": true}', '{"reply": {"text": "t", "tool_calls": [{"name": "bash"}], "note": "n"}}']),
             min_size=1, max_size=10).map(lambda lines: "\n".join(lines).encode()),
    st.lists(SCRIPT_LINES, max_size=8).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogateescape")),
    st.binary(max_size=64),
)
STATES = st.sampled_from(["populated"] * 6 + ["missing", "empty"] * 2 + ["file", "under-file", "read-only", "read-only",
                          "corrupt-settings", "corrupt-settings", "corrupt-settings", "torn-log", "torn-log", "corrupt-log",
                          "corrupt-log", "sessions-file", "locked", "locked"])
GOOD_SETS = st.sampled_from([
    ["retry.maxRetries", "5"], ["transport", "sse"], ["defaultModel", "m2"], ["temperature", "0.25"], ["retry.enabled", "false"],
    ["retry.fallbackChains", '{"a": ["b", "c"]}'], ["providerMaxInFlight", '{"x": 2}'], ["memory.thinking", "high"],
    ["directors.maxSteps", "3"], ["serviceTier", "flex"], ["compaction.keepRecentTokens", "0"],
])
GOOD_LINES = st.sampled_from(["set transport websocket", "toggle retry.enabled", "alias go \"set transport sse\"", "save",
                              "set retry.maxRetries 9; toggle compaction.enabled", "bind x y", "set nosuch 1"])


def _opt(flag: str, value: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), value.map(lambda v: [flag, v]))


def _flags(*options: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.tuples(*options).map(lambda parts: [word for part in parts for word in part])


COMMON = (_opt("--session", st.sampled_from(["s1", "s1", "s2"]) | WORDS | TEXT), _opt("--session-dir", PATHS), _opt("--project", PATHS))
SESSION_IDS = st.sampled_from(["s1", "s2", "nosuch"]) | TEXT
ENTRIES = st.sampled_from(["1", "2", "3"]) | NUMBERS | TEXT

ARGV = st.one_of(
    st.tuples(st.just(["directors", "simulate", "--script", "{tmp}/script.jsonl"]),
              _flags(_opt("--max-steps", st.sampled_from(["0", "1", "2", "-1"])), _opt("--stack-cap", st.sampled_from(["0", "1", "3"])))),
    st.tuples(st.just(["set"]), GOOD_SETS, _flags(st.sampled_from([[], ["--global"]]), _opt("--session", st.sampled_from(["s1", "s2", "s3"])))),
    st.tuples(st.just(["cvar"]), GOOD_LINES.map(lambda v: [v]), st.sampled_from([["--session", "s1"], ["--session", "s2"]])),
    st.tuples(st.just(["mcp", "add"]), st.sampled_from(["git", "db", "x.y"]).map(lambda v: [v]), JSON_VALUE.map(lambda v: ['{"v": %s}' % v])),
    st.tuples(st.just(["session"]), st.sampled_from([["fork", "s1", "2"], ["rewind", "s1", "1"], ["show", "s1"], ["new"], ["list"],
                                                      ["fork", "s1", "1", "--conversation", "main.worker"]])),
    st.tuples(st.just(["set"]), CVARS.map(lambda v: [v]), TEXT.map(lambda v: [v]), _flags(st.sampled_from([[], ["--global"]]), *COMMON)),
    st.tuples(st.just(["toggle"]), CVARS.map(lambda v: [v]), _flags(st.sampled_from([[], ["--global"]]), *COMMON)),
    st.tuples(st.just(["cvar"]), (WORDS | TEXT).map(lambda v: [v]), _flags(*COMMON)),
    st.tuples(st.just(["settings", "show"]), _flags(*COMMON)),
    st.tuples(st.just(["mcp", "add"]), (WORDS | TEXT).map(lambda v: [v]), st.one_of(JSON_VALUE, ODD_JSON, DEEP, TEXT).map(lambda v: [v])),
    st.tuples(st.just(["mcp", "remove"]), (WORDS | TEXT).map(lambda v: [v])),
    st.tuples(st.just(["session"]), _opt("--session-dir", PATHS), st.one_of(
        st.just(["new"]), st.just(["list"]),
        st.tuples(st.just(["show"]), SESSION_IDS.map(lambda v: [v]), _opt("--conversation", WORDS | TEXT)).map(lambda t: [w for p in t for w in p]),
        st.tuples(st.sampled_from([["fork"], ["rewind"]]), SESSION_IDS.map(lambda v: [v]), ENTRIES.map(lambda v: [v]),
                  _opt("--conversation", WORDS | TEXT)).map(lambda t: [w for p in t for w in p]),
    )),
    st.tuples(st.just(["directors", "simulate", "--script"]), PATHS.map(lambda v: [v]),
              _flags(_opt("--max-steps", NUMBERS), _opt("--stack-cap", NUMBERS), _opt("--stall-steps", NUMBERS), _opt("--session-dir", PATHS))),
    st.tuples(st.just(["memory", "simulate", "--messages"]), st.sampled_from(["1", "7", "40", "0", "-3", "x", "9" * 30]).map(lambda v: [v]),
              _flags(_opt("--png", PATHS), _opt("--seed", NUMBERS))),
    st.tuples(st.sampled_from([["effort", "offered"], ["effort", "clamp"], ["effort", "cycle"]]),
              _flags(_opt("--map", st.one_of(JSON_VALUE, ODD_JSON, DEEP, st.just('{"high": "h", "max": null}'))),
                     st.sampled_from([[], ["--reasoning"]]), _opt("--level", LEVELS), st.sampled_from([[], ["--backward"]]))),
    st.tuples(st.just(["laws", "--area"]), st.sampled_from(["nosuch", "", "\udcff"]).map(lambda v: [v])),
    st.lists(TEXT, max_size=5).map(lambda words: (words,)),
).map(lambda parts: [word for part in parts for word in part])
TOP = st.sampled_from([[]] * 6 + [["--agent-dir", "{agent}"], ["--agent-dir", "{tmp}/a-file"], ["--agent-dir", "\udcff"]])


def _runs_slow(argv: list[str]) -> bool:
    """`eukhe laws` with a real area runs every law: not a front-door case."""
    words = [w for w in argv if not w.startswith("-")]
    return bool(words) and words[0] == "laws" and "--area" not in argv and "--help" not in argv and "-h" not in argv


def _family(argv: list[str]) -> str:
    if argv and argv[0] in {"mcp", "directors", "memory", "effort"}:
        return " ".join(argv[:2])
    return argv[0] if argv and argv[0] in {"set", "toggle", "cvar", "settings", "session", "laws"} else "random"


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(top=TOP, argv=ARGV, state=STATES, script=SCRIPT)
def test_the_front_door_never_breaks(top: list[str], argv: list[str], state: str, script: bytes) -> None:
    if _runs_slow(argv):
        argv = [*argv, "--area", "nosuch"]
    with world(state, script, freeze_spare="{tmp}/read-only" in top + argv) as here, environment(here):
        full = [here.fill(word) for word in top + argv]
        before = snapshot(here.agent)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            # `eukhe laws` loads the Hypothesis profiles: in process, inside this test, Hypothesis
            # warns about that on stderr; a real process never sees it
            warnings.simplefilter("ignore", HypothesisDeprecationWarning)
            status = cli.main(full)
        event(f"exit {status}")
        event(f"command {_family(argv)}")
        event(f"state {state}")
        check(status, err.getvalue(), full)
        problems = judge(before, snapshot(here.agent))
        assert not problems, f"{full!r} in state {state}: " + "; ".join(problems)


PROCESS_EXAMPLES = max(4, settings.default.max_examples // 50)  # 6 under `laws`, 400 under `hunt`


@settings(max_examples=PROCESS_EXAMPLES, suppress_health_check=list(HealthCheck))
@given(top=TOP, argv=ARGV, state=STATES, script=SCRIPT)
def test_the_front_door_as_a_real_process(top: list[str], argv: list[str], state: str, script: bytes) -> None:
    """The same property with the arguments as raw bytes to a real `python -m eukhe`."""
    if _runs_slow(argv):
        argv = [*argv, "--area", "nosuch"]
    with world(state, script, freeze_spare="{tmp}/read-only" in top + argv) as here:
        full = [os.fsencode(here.fill(word)) for word in top + argv]
        before = snapshot(here.agent)
        env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_")}
        env.update({"EUKHE_AGENT_DIR": str(here.agent), "HOME": str(here.tmp), "EUKHE_LOCK_TIMEOUT": "0"})
        done = subprocess.run([sys.executable, "-m", "eukhe", *full], capture_output=True, env=env, cwd=here.tmp, timeout=300, check=False)
        check(done.returncode, done.stderr.decode("utf-8", "backslashreplace"), [w.decode("utf-8", "surrogateescape") for w in full])
        problems = judge(before, snapshot(here.agent))
        assert not problems, f"{full!r} in state {state}: " + "; ".join(problems)


# -- every value a set writes to config.cfg reads back ----------------------------------------------

ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(["a\nb", "a\u2028b", "1" + "0" * 400 + ".5"])


@settings(suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(cvar=st.sampled_from(["defaultModel", "memory.model", "temperature"]), value=ANY_TEXT, state=st.sampled_from(["populated", "missing"]))
def test_every_set_global_value_reads_back_from_config_cfg(cvar: str, value: str, state: str) -> None:
    with world(state, b"", freeze_spare=False) as here, environment(here):
        before = snapshot(here.agent)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["set", cvar, value, "--global"])
        check(status, err.getvalue(), [cvar, value])
        problems = judge(before, snapshot(here.agent))
        assert not problems, "; ".join(problems)
        if status == 0:
            assert cfg_state(here.agent / "config.cfg", local_only=False) == 2
