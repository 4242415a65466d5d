"""Regression tests of control.md S4 (settings as console variables), on real files, real
session directories and, where the seed says processes, real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eukhe.session import Store
from eukhe.settings import binds as bindsmod
from eukhe.settings.agent import CVAR_DOC, ERROR_ROW, CvarAgent, EukheSettings
from eukhe.settings.config import SettingsManager
from eukhe.settings.cvar import Aliases, Cvar, CvarError, CvarType, ExpandError, Registry, RegistryError, parse_list
from eukhe.settings.cvar_table import TABLE, registry
from eukhe.settings.files import DocumentError

Dirs = tuple[Path, Path, Path]

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from eukhe.session import Store
    from eukhe.settings.agent import CvarAgent, EukheSettings
    agent_dir, sessions, mode, arg = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    settings = EukheSettings(agent_dir)
    if mode == "switch":
        with Store(sessions).create(arg) as session:
            agent = CvarAgent(settings, session.conversation("main"))
            for i in range(20):
                agent.set("transport", "sse" if arg == "one" else "websocket")
                agent.toggle("retry.enabled")
            print(agent.value("transport"), agent.value("retry.enabled"))
    else:
        for i in range(25):
            settings.set_global(arg, str(i + 1))
    """
)


def _worker(dirs: Dirs, mode: str, arg: str) -> subprocess.Popen[str]:
    agent, _, sessions = dirs
    return subprocess.Popen([sys.executable, "-c", WORKER, str(agent), str(sessions), mode, arg], stdout=subprocess.PIPE, text=True)


def test_the_table_starts_and_a_bad_registry_stops_startup() -> None:
    assert len(registry()) == len(TABLE)
    with pytest.raises(RegistryError, match="duplicate"):
        Registry([TABLE[0], TABLE[0]])
    with pytest.raises(RegistryError, match="default"):
        Registry([Cvar("x", CvarType("Nat"), "Local", True, False, -1)])


def test_a_switch_changes_only_its_own_session(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    workers = [_worker(dirs, "switch", "one"), _worker(dirs, "switch", "two")]
    outputs = [w.communicate(timeout=120)[0].split() for w in workers]
    assert [w.returncode for w in workers] == [0, 0]
    assert outputs == [["sse", "True"], ["websocket", "True"]]
    store = Store(dirs[2])
    settings = EukheSettings(agent_dir)
    for sid, transport in (("one", "sse"), ("two", "websocket")):
        with store.open(sid, writer=False) as session:
            assert CvarAgent(settings, session.conversation("main")).value("transport") == transport
    assert not (agent_dir / "settings.json").exists() and not (agent_dir / "config.cfg").exists()


def test_concurrent_global_sets_both_land(dirs: Dirs) -> None:
    workers = [_worker(dirs, "global", "retry.maxRetries"), _worker(dirs, "global", "compaction.keepRecentTokens")]
    for w in workers:
        w.communicate(timeout=120)
    assert [w.returncode for w in workers] == [0, 0]
    settings = EukheSettings(dirs[0])
    assert settings.cvars.value([], "retry.maxRetries") == 25
    assert settings.cvars.value([], "compaction.keepRecentTokens") == 25
    assert settings.config.errors == []


def test_a_setter_never_clobbers_a_global_settings_file_that_failed_to_parse(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    broken = b'{"retry": {"maxRetries": 4}, oops'
    (agent_dir / "settings.json").write_bytes(broken)
    settings = EukheSettings(agent_dir, project)
    assert any("not JSON" in e.show() for e in settings.config.errors)
    with pytest.raises(DocumentError):
        SettingsManager(settings.registry, settings.paths).set("defaultModel", "m")
    assert (agent_dir / "settings.json").read_bytes() == broken


def test_cvar_rejects_a_global_cvar_from_a_session(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        with pytest.raises(CvarError) as refused:
            agent.set("providerMaxInFlight", '{"openai": 2}')
        assert (refused.value.kind, refused.value.id) == ("Global", "providerMaxInFlight")
        assert refused.value.data()["kind"] == "Global"
        assert agent.run_line("set idleEvictionMinutes 5; set transport sse") == [
            ("set idleEvictionMinutes 5", "CvarError::Global(idleEvictionMinutes)"),
            ("set transport sse", "ok"),
        ]
        assert session.conversation("main").document(CVAR_DOC) == {"sets": [["transport", "sse"]], "aliases": []}
    done = subprocess.run([sys.executable, "-m", "eukhe", "--agent-dir", str(agent_dir), "set", "providerMaxInFlight", "{}",
                           "--session", "s", "--session-dir", str(sessions)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("CvarError::Global(providerMaxInFlight): ")


def test_a_subagent_inherits_its_parents_family_under_its_profile(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "subagent.cfg").write_text("set transport sse\nset retry.maxRetries 1\n")
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "reviewer.cfg").write_text("set compaction.keepRecentTokens 99\n")
    settings = EukheSettings(agent_dir)
    with Store(sessions).create("s") as session:
        main = CvarAgent(settings, session.conversation("main"))
        main.run_line("set retry.maxRetries 7; set stt.enabled true")
        sub = CvarAgent(settings, session.conversation("main.reviewer"))
        assert sub.value("stt.enabled") is True  # inherited from the parent's sets
        assert sub.value("retry.maxRetries") == 1  # its profile goes on top of the parent
        assert sub.value("transport") == "sse" and main.value("transport") == "auto"
        assert sub.value("compaction.keepRecentTokens") == 99
        sub.toggle("stt.enabled")
        assert sub.value("stt.enabled") is False and main.value("stt.enabled") is True
        assert [a["name"] for a in sub.family_json()] == ["main", "reviewer"]


def test_a_fork_starts_from_the_agent_state_at_its_fork_point(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    settings = EukheSettings(agent_dir)
    store = Store(sessions)
    with store.create("s") as session:
        main = session.conversation("main")
        agent = CvarAgent(settings, main)
        agent.set("transport", "sse")
        point = main.head
        assert point is not None
        agent.set("transport", "websocket")
        forked = main.fork(point)
        main.rewind(point)
        assert agent.value("transport") == "sse"
    with store.open(forked) as session:
        assert CvarAgent(settings, session.conversation("main")).value("transport") == "sse"


def test_an_unreadable_cfg_file_is_reported_and_never_overwritten(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    garbage = b"set transport sse\n\xff\xfe not utf-8\n"
    (agent_dir / "config.cfg").write_bytes(garbage)
    settings = EukheSettings(agent_dir)
    assert any("config.cfg" in e.source and "cannot be read" in e.message for e in settings.config.errors)
    with pytest.raises(DocumentError):
        settings.set_global("retry.maxRetries", "2")
    with pytest.raises(DocumentError):
        settings.toggle_global("retry.enabled")
    assert (agent_dir / "config.cfg").read_bytes() == garbage
    with Store(sessions).create("s") as session:
        rows = CvarAgent(settings, session.conversation("main")).show_errors()
        assert len(rows) == 1 and "cannot be read" in rows[0]


def test_a_global_toggle_flips_the_global_value_not_the_projects(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    (project / ".eukhe" / "config.cfg").write_text("set retry.enabled true\n")
    settings = EukheSettings(agent_dir, project)
    assert settings.cvars.value([], "retry.enabled") is True  # the project file wins in the config
    assert settings.toggle_global("retry.enabled") is True  # the global layer was false
    assert (agent_dir / "config.cfg").read_text() == "set retry.enabled true\n"
    assert settings.toggle_global("retry.enabled") is False
    assert (project / ".eukhe" / "config.cfg").read_text() == "set retry.enabled true\n"


def test_profile_and_agent_alias_errors_reach_the_manager(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "main.cfg").write_text('set transport sse\nset transport "unterminated\nset bogus.id 1\n')
    settings = EukheSettings(agent_dir)
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        main.commit(documents={CVAR_DOC: {"sets": [], "aliases": [["fast", 'set transport "open']]}})
        agent = CvarAgent(settings, main)
        shown = [e.show() for e in agent.errors()]
        assert any("main.cfg:2" in s and "does not parse" in s for s in shown)
        assert any("main.cfg:3" in s and "Undeclared(bogus.id)" in s for s in shown)
        assert any(CVAR_DOC in s and "alias" in s for s in shown)
        assert agent.value("transport") == "sse"


def test_settings_errors_show_as_a_row_of_the_session(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "settings.json").write_text(json.dumps({"transport": "pigeon", "bogus": 1}))
    settings = EukheSettings(agent_dir)
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        agent = CvarAgent(settings, main)
        assert len(agent.show_errors()) == 2
        assert agent.show_errors() == []  # each distinct error one time
        (agent_dir / "config.cfg").write_text("set maxToolRounds many\n")
        settings.reload()
        new = agent.show_errors()
        assert len(new) == 1 and "maxToolRounds" in new[0]
        rows = [e for e in main.user_view() if e.custom_type == ERROR_ROW]
        assert len(rows) == 3 and all(e.display_only for e in rows)
        assert not any(e.custom_type == ERROR_ROW for e in main.model_view())


def test_unreadable_binds_cfg_and_failed_import_are_warnings(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "binds.cfg").write_bytes(b"bind f8 \xff\n")
    loaded = bindsmod.load(agent_dir)
    assert len(loaded.warnings) == 1 and "cannot be read" in loaded.warnings[0]
    assert loaded.binds.press("escape", Aliases()) is not None  # the defaults still apply
    (agent_dir / "binds.cfg").unlink()
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.interrupt": "escape"}))
    (agent_dir / "binds.cfg.lock").mkdir()  # the import cannot take the lock: it cannot write
    loaded = bindsmod.load(agent_dir)
    assert any("could not be imported" in w for w in loaded.warnings)
    assert not (agent_dir / "binds.cfg").exists()


def test_binds_cfg_is_written_once_from_keybindings_json(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.interrupt": ["escape", "ctrl+c"], "editor.clear": "ctrl+c"}))
    loaded = bindsmod.load(agent_dir)
    assert loaded.warnings == []
    text = (agent_dir / "binds.cfg").read_text()
    assert text == 'bind escape "action app.interrupt"\nbind ctrl+c "action app.interrupt; action editor.clear"\n'
    pressed = loaded.binds.press("ctrl+c", Aliases())
    assert pressed is not None and pressed.client == ["app.interrupt", "editor.clear"]
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.other": "f1"}))
    bindsmod.load(agent_dir)
    assert (agent_dir / "binds.cfg").read_text() == text  # one time only


def test_a_press_runs_the_first_bind_sends_sets_to_the_session_and_actions_to_the_client(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "binds.cfg").write_text('bind f8 "action app.stt.toggle; quick"\nbind f8 "toggle x"\nbind escape ""\n')
    loaded = bindsmod.load(agent_dir)
    aliases = Aliases()
    aliases.define("quick", "set transport sse; toggle stt.enabled")
    pressed = loaded.binds.press("f8", aliases)
    assert pressed is not None
    assert [str(c) for c in pressed.session] == ["set transport sse", "toggle stt.enabled"]
    assert pressed.client == ["app.stt.toggle"]
    empty = loaded.binds.press("escape", aliases)  # an empty bind turns the default off
    assert empty is not None and empty.session == [] and empty.client == []
    assert loaded.binds.press("f12", aliases) is None  # no bind: runs nothing


def test_an_expansion_that_fails_runs_nothing(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        agent = CvarAgent(EukheSettings(agent_dir), main)
        agent.run_line('alias loop "set transport sse; loop"')
        head = main.head
        with pytest.raises(ExpandError) as cycle:
            agent.run_line("set transport websocket; loop")
        assert cycle.value.kind == "Cycle"
        with pytest.raises(ExpandError) as unknown:
            agent.run_line("set transport websocket; nosuch")
        assert (unknown.value.kind, unknown.value.name) == ("Unknown", "nosuch")
        assert main.head == head and agent.value("transport") == "auto"


def test_cvar_save_reads_back_as_the_profile(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    settings = EukheSettings(agent_dir)
    with Store(sessions).create("s") as session:
        agent = CvarAgent(settings, session.conversation("main"))
        agent.run_line('set transport sse; set temperature 0.5; set thinkingBudgets "{\\"low\\": 64}"')
        before = {d.id: agent.value(d.id) for d in settings.registry}
        written = agent.save()
        assert [k for k, _ in written] == ["transport", "thinkingBudgets"]  # temperature does not persist
    with Store(sessions).create("t") as fresh:
        again = CvarAgent(settings, fresh.conversation("main"))
        for decl in settings.registry:
            if decl.persist:
                assert again.value(decl.id) == before[decl.id], decl.id


def test_parse_list_keeps_quoted_spaces() -> None:
    assert [str(c) for c in parse_list('set defaultModel "a b"; toggle x;; bind f1 "set y 1"')] == [
        'set defaultModel "a b"', "toggle x", 'bind f1 "set y 1"',
    ]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_float_is_refused_as_bad_value(value: float) -> None:
    from eukhe.settings.cvar import Cvars

    cvars = Cvars(registry())
    error = cvars.check("temperature", value, True)
    assert error is not None and error.kind == "BadValue"
    with pytest.raises(CvarError) as refused:
        cvars.parse_set("temperature", "1" * 400 + ".5", local_only=True)  # a decimal past the largest float
    assert refused.value.kind == "BadValue"


def test_set_global_writes_a_config_cfg_that_reads_back(dirs: Dirs) -> None:
    """A huge float is written as a decimal (never 1e+300 or inf), a String with a newline, a CR
    or U+2028 as escapes on its one line: config.cfg still parses and gives the same values."""
    from eukhe.settings import cfg
    from eukhe.settings.cvar import Cvars

    agent_dir = dirs[0]
    path = agent_dir / "config.cfg"
    values = [("temperature", 1e300), ("memory.model", "a\nb\rc\u2028d"), ("defaultModel", ""), ("sessionDir", "tiny 1e-07")]
    cfg.write_sets(path, values)
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == len(values) and "inf" not in text and "e+" not in text
    read = cfg.read_cfg(path, Cvars(registry()), local_only=False)
    assert not read.errors
    assert read.sets == values


def test_an_alias_defined_again_replaces_the_session_alias_of_that_name(dirs: Dirs) -> None:
    # S4: `alias name body` defines name; a second definition of the same name replaces the
    # first in the session's cvar document (one entry per name, the other aliases kept).
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        agent.run_line('alias fast "set transport sse"; alias slow "set transport websocket"')
        agent.run_line('alias fast "set transport auto"')
        assert agent.document()["aliases"] == [["slow", "set transport websocket"], ["fast", "set transport auto"]]
        agent.run_line("set transport sse; fast")
        assert agent.value("transport") == "auto"


def test_a_refused_value_names_the_value_and_the_type(dirs: Dirs) -> None:
    # The answer to a refused set ({kind, id, message}) says which value was not of which type.
    settings = EukheSettings(dirs[0])
    error = settings.cvars.check("sessionDir", 7, local_only=False)
    assert error is not None and error.data() == {"kind": "BadValue", "id": "sessionDir", "message": "7 is not a String (sessionDir)"}
    error = settings.cvars.check("transport", "carrier-pigeon", local_only=True)
    assert error is not None and error.message == '"carrier-pigeon" is not a one of auto|sse|websocket (transport)'


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    # write_atomic: the old file stays whole and the temporary file is removed when the write
    # fails, and the caller gets the write's own error.
    from eukhe.settings.files import write_atomic

    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, '{"a": "\ud800"}')
    assert path.read_text(encoding="utf-8") == '{"a": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_line_toggles_in_the_agent_and_leaves_client_commands_to_the_client(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        assert agent.run_line("toggle stt.enabled; bind f1 toggle") == [("toggle stt.enabled", "ok"), ("bind f1 toggle", "client-only")]
        assert agent.value("stt.enabled") is True
        assert session.conversation("main").document(CVAR_DOC)["sets"] == [["stt.enabled", True]]


def test_a_subagent_takes_the_aliases_of_subagent_cfg_and_of_its_own_profile(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "subagent.cfg").write_text('alias fast "set transport sse"\n')
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "reviewer.cfg").write_text('alias slow "set transport websocket"\n')
    with Store(sessions).create("s") as session:
        settings = EukheSettings(agent_dir)
        _, aliases, _ = settings.profile("reviewer", root=False)
        assert [name for name, _ in aliases] == ["fast", "slow"]
        sub = CvarAgent(settings, session.conversation("main.reviewer"))
        assert sub.run_line("fast") == [("set transport sse", "ok")] and sub.value("transport") == "sse"


def test_set_global_takes_a_global_cvar_and_a_value_tells_its_layer(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    settings = EukheSettings(agent_dir)
    assert settings.set_global("memory.model", "anthropic/claude-haiku-4-5") == "anthropic/claude-haiku-4-5"
    assert settings.cvars.value([], "memory.model") == "anthropic/claude-haiku-4-5"
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "main.cfg").write_text("set transport sse\n")
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        assert agent.settings.cvars.sourced(agent.family(), "transport") == ("sse", "profile main")
        agent.set("transport", "websocket")
        assert agent.settings.cvars.sourced(agent.family(), "transport") == ("websocket", "sets main")


def test_a_cfg_line_is_stripped_of_the_command_languages_blanks_only() -> None:
    from eukhe.settings.cfg import unparsed

    assert unparsed("  \tset transport sse\r\n# a comment\n") is None
    assert unparsed("\u2003set transport sse\n") == (1, "unknown command \u2003set")  # an em space is part of the word


def test_a_redefined_alias_is_listed_at_its_last_definition() -> None:
    table = Aliases()
    for name, body in (("a", "set transport sse"), ("b", "toggle stt.enabled"), ("a", "set transport websocket")):
        table.define(name, body)
    assert table.as_json() == [["b", "toggle stt.enabled"], ["a", "set transport websocket"]]
