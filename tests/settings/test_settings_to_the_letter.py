"""What the user sees of the settings, to the letter (issue 9, item 6(b): the settings area's
mutation survivors). Each expected text is written here by hand from the seed (control.md S4
cvars, S4b config documents) and the documented messages of production's modules (the
binds.cfg warnings of binds.py, the trust warning, RegistryError, the family a spawn carries),
never computed by calling production.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.session import Store
from eukhe.settings import binds as bindsmod
from eukhe.settings import config
from eukhe.settings.agent import CvarAgent, EukheSettings
from eukhe.settings.cvar import Aliases, Cvar, CvarType, Registry, RegistryError
from eukhe.settings.cvar_table import TABLE, registry
from eukhe.settings.files import read_text

Dirs = tuple[Path, Path, Path]


# -- RegistryError (S4.1): the message that stops eukhe at startup -----------------------------

@pytest.mark.parametrize(
    ("decls", "kind", "message"),
    [
        pytest.param([TABLE[0], TABLE[0]], "duplicate", "RegistryError::duplicate: cvar transport is declared twice", id="duplicate"),
        pytest.param([Cvar("x", CvarType("Nat"), "Local", True, False, -1)], "default",
                     "RegistryError::default: cvar x has a default that is not of its type", id="mistyped-default"),
    ],
)
def test_a_bad_registry_stops_startup_with_its_message(decls: list[Cvar], kind: str, message: str) -> None:
    with pytest.raises(RegistryError) as stopped:
        Registry(decls)
    assert (stopped.value.kind, str(stopped.value)) == (kind, message)


# -- the trust warning (S4b.5): "The trust warning names them" ---------------------------------

def test_the_trust_warning_names_each_withheld_item_in_order(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"maxToolRounds": 9, "transport": "sse", "mcpServers": {"x": {"command": "e"}}}))
    (project / ".eukhe" / "SYSTEM.md").write_text("obey the project")
    untrusted = EukheSettings(agent_dir, project).config
    assert untrusted.trust_warning() == "untrusted project: withheld SYSTEM.md, maxToolRounds, mcpServers.x"
    (project / ".eukhe" / "SYSTEM.md").unlink()
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"retry": {"maxRetries": 9}}))
    assert EukheSettings(agent_dir, project).config.trust_warning() == "untrusted project: withheld retry.maxRetries"
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"transport": "sse"}))
    assert EukheSettings(agent_dir, project).config.trust_warning() is None  # nothing guarded: no warning


# -- AuthStorage (S4b.1): one credential per provider ----------------------------------------

def test_auth_storage_gets_the_credential_of_its_provider(dirs: Dirs) -> None:
    auth = dirs[0] / "auth.json"
    storage = config.AuthStorage(auth)
    assert storage.get("openai") is None  # a missing file reads as empty
    auth.write_text(json.dumps({"openai": {"key": "sk-1"}, "anthropic": {"key": "sk-2"}}))
    assert [storage.get(p) for p in ("openai", "anthropic", "google")] == [{"key": "sk-1"}, {"key": "sk-2"}, None]
    storage.set("google", {"key": "sk-3"})
    assert config.AuthStorage(auth).get("google") == {"key": "sk-3"}


# -- the family a spawn carries (S4: cvarFamily of the create config) --------------------------

def test_the_family_a_spawn_carries_names_profiles_and_sets(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "main.cfg").write_text("set transport sse\n")
    (agent_dir / "subagent.cfg").write_text("set retry.enabled false\n")
    (agent_dir / "agents" / "reviewer.cfg").write_text("set maxToolRounds 7\n")
    settings = EukheSettings(agent_dir)
    with Store(sessions).create("s") as session:
        CvarAgent(settings, session.conversation("main")).run_line("set serviceTier flex")
        sub = CvarAgent(settings, session.conversation("main.reviewer"))
        sub.set("stt.enabled", "true")
        expected: list[dict[str, Any]] = [
            {"name": "main", "profile": [["transport", "sse"]], "sets": [["serviceTier", "flex"]]},
            {"name": "reviewer", "profile": [["retry.enabled", False], ["maxToolRounds", 7]], "sets": [["stt.enabled", True]]},
        ]
        assert json.loads(json.dumps(sub.family_json())) == expected  # as the create config carries it


# -- the errors of an agent's profile files (S4: "The errors of a profile file ... are settings errors") --

def test_each_agent_reports_the_errors_of_its_own_profile_files(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "agents").mkdir()
    (agent_dir / "subagent.cfg").write_text("set bogus.sub 1\n")
    (agent_dir / "agents" / "main.cfg").write_text("set bogus.main 1\n")
    (agent_dir / "agents" / "reviewer.cfg").write_text("set bogus.reviewer 1\n")
    settings = EukheSettings(agent_dir)
    sub_error = f"{agent_dir}/subagent.cfg:1: CvarError::Undeclared(bogus.sub): no cvar bogus.sub is declared"
    main_error = f"{agent_dir}/agents/main.cfg:1: CvarError::Undeclared(bogus.main): no cvar bogus.main is declared"
    reviewer_error = f"{agent_dir}/agents/reviewer.cfg:1: CvarError::Undeclared(bogus.reviewer): no cvar bogus.reviewer is declared"
    with Store(sessions).create("s") as session:
        # the root is the agent main: its profile is agents/main.cfg alone
        assert [e.show() for e in CvarAgent(settings, session.conversation("main")).errors()] == [main_error]
        # a subagent's profile is subagent.cfg, then agents/<name>.cfg
        sub = CvarAgent(settings, session.conversation("main.reviewer"))
        assert [e.show() for e in sub.errors()] == [sub_error, reviewer_error]


# -- /set --global toggle (S4): the global layer only, Global cvars included --------------------

def test_a_global_toggle_flips_a_global_cvar_set_in_the_global_config_cfg(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "config.cfg").write_text("set titles.generate false\n")  # titles.generate: Global Bool, default true
    settings = EukheSettings(agent_dir)
    assert settings.toggle_global("titles.generate") is True
    assert (agent_dir / "config.cfg").read_text() == "set titles.generate true\n"
    assert settings.toggle_global("titles.generate") is False
    assert (agent_dir / "config.cfg").read_text() == "set titles.generate false\n"


# -- key binds (S4.5): the warnings of binds.cfg and of the import -----------------------------

BINDS_CASES: list[tuple[str, dict[str, bytes], list[str], str]] = [
    # (name, files of the agent dir, the warnings ({A}: the agent dir), binds.cfg afterwards)
    ("keybindings.json that is not an object", {"keybindings.json": b"[1, 2]"},
     ["warning: binds.cfg could not be imported from {A}/keybindings.json: not a JSON object"], "missing"),
    ("keybindings.json that is not JSON", {"keybindings.json": b"{"},
     ["warning: binds.cfg could not be imported from {A}/keybindings.json: "
      "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"], "missing"),
    ("binds.cfg that is not UTF-8", {"binds.cfg": b"bind f8 \xff\n"},
     ["warning: {A}/binds.cfg cannot be read (not UTF-8 at byte 8); default binds only"], "kept"),
    ("a line that is not a bind", {"binds.cfg": b'bind f1 "action a"\nset transport sse\naction app.x\n'},
     ["warning: {A}/binds.cfg:2: set transport sse is not a bind", "warning: {A}/binds.cfg:3: action app.x is not a bind"], "kept"),
    ("comments and blank lines", {"binds.cfg": b'# a comment\n// a comment\n\n \t\r\nbind f1 "action a"\n'}, [], "kept"),
    ("an em space is part of the first word", {"binds.cfg": '\u2003bind f1 "action a"\n'.encode()},
     ["warning: {A}/binds.cfg:1: unknown command \u2003bind"], "kept"),
    ("a line that does not parse", {"binds.cfg": b'bind f1 "action a\n'},
     ["warning: {A}/binds.cfg:1: unterminated quote"], "kept"),
]


@pytest.mark.parametrize(("files", "warnings", "after"), [pytest.param(f, w, a, id=n) for n, f, w, a in BINDS_CASES])
def test_binds_warnings_say_what_is_wrong_and_where(dirs: Dirs, files: dict[str, bytes], warnings: list[str], after: str) -> None:
    agent_dir = dirs[0]
    for name, data in files.items():
        (agent_dir / name).write_bytes(data)
    loaded = bindsmod.load(agent_dir)
    assert loaded.warnings == [w.replace("{A}", str(agent_dir)) for w in warnings]
    binds_cfg = agent_dir / "binds.cfg"
    if after == "missing":
        assert not binds_cfg.exists()
    else:
        assert binds_cfg.read_bytes() == files["binds.cfg"]
    escape = loaded.binds.press("escape", Aliases())
    assert escape is not None and escape.client == ["app.interrupt"]  # the defaults still apply


def test_a_binds_cfg_another_process_wrote_first_is_never_overwritten_by_the_import(
    dirs: Dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """binds.cfg is written one time: when another eukhe writes it after this one found it
    missing (while this one reads keybindings.json), the import keeps the other's file."""
    agent_dir = dirs[0]
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.interrupt": "f9"}))
    theirs = 'bind f2 "action app.theirs"\n'

    def racing_read(path: Path) -> str | None:
        if path.name == "keybindings.json" and not (agent_dir / "binds.cfg").exists():
            (agent_dir / "binds.cfg").write_text(theirs)  # the other process's import lands here
        return read_text(path)

    monkeypatch.setattr(bindsmod, "read_text", racing_read)
    loaded = bindsmod.load(agent_dir)
    assert loaded.warnings == []
    assert (agent_dir / "binds.cfg").read_text() == theirs
    assert loaded.binds.press("f9", Aliases()) is None
    f2 = loaded.binds.press("f2", Aliases())
    assert f2 is not None and f2.client == ["app.theirs"]


def test_the_global_toggle_flips_the_text_it_rewrites(dirs: Dirs, monkeypatch: pytest.MonkeyPatch) -> None:
    """The value a global toggle flips is read from the very text it rewrites under the lock:
    an editor that does not take the lock and writes config.cfg between eukhe's read and its
    reload does not change what is flipped (its write is replaced, as any unlocked write is)."""
    from eukhe.settings import agent as agentmod
    from eukhe.settings.cfg import check_parses

    agent_dir = dirs[0]
    cfg = agent_dir / "config.cfg"
    cfg.write_text("# mine\n")

    def editor_writes_meanwhile(path: Path, text: str) -> None:
        cfg.write_text("set titles.generate false\n")  # lands after eukhe read "# mine"
        check_parses(path, text)

    settings = EukheSettings(agent_dir)
    monkeypatch.setattr(agentmod, "check_parses", editor_writes_meanwhile)
    assert settings.toggle_global("titles.generate") is False  # "# mine" sets nothing: the default true flips
    assert cfg.read_text() == "# mine\nset titles.generate false\n"


# -- runtime sets of one line (S4: the sets of an agent, committed on each change) -------------

def test_a_toggle_after_a_set_on_one_line_flips_the_value_just_set(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        agent = CvarAgent(EukheSettings(agent_dir), main)
        assert agent.run_line("set stt.enabled true; toggle stt.enabled; toggle stt.enabled") == [
            ("set stt.enabled true", "ok"), ("toggle stt.enabled", "ok"), ("toggle stt.enabled", "ok"),
        ]
        assert main.document("eukhe.cvar.agent") == {"sets": [["stt.enabled", True], ["stt.enabled", False], ["stt.enabled", True]], "aliases": []}
        assert agent.value("stt.enabled") is True


def test_each_command_of_a_line_has_its_outcome(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        assert agent.run_line('bind f1 toggle; alias a "set transport"; set transport sse; toggle stt.enabled; toggle stt.enabled') == [
            ("bind f1 toggle", "client-only"),
            ('alias a "set transport"', "ParseError(set takes 2 words, not 1)"),
            ("set transport sse", "ok"),
            ("toggle stt.enabled", "ok"),
            ("toggle stt.enabled", "ok"),
        ]
        assert agent.value("transport") == "sse" and agent.value("stt.enabled") is False


@pytest.mark.parametrize("line", ["bind f1 toggle", "action app.interrupt", "set transport pigeon", "set maxToolRounds many; toggle transport; set idleEvictionMinutes 5"])
def test_a_line_that_changes_nothing_commits_nothing(dirs: Dirs, line: str) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        agent = CvarAgent(EukheSettings(agent_dir), main)
        agent.run_line("set transport sse")
        head = main.head
        agent.run_line(line)
        assert main.head == head
        assert main.document("eukhe.cvar.agent") == {"sets": [["transport", "sse"]], "aliases": []}


# -- a cfg writer drops only the single-set lines of what it writes (cfg.py write_sets) ---------

@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param("set titles.generate false\n", "set titles.generate true\n", id="a-single-set-line"),
        pytest.param(" \tset titles.generate false\r\n", "set titles.generate true\n", id="blanks-around"),
        pytest.param("set titles.generate false;\x0c\n", "set titles.generate false;\x0c\nset titles.generate true\n", id="two-commands"),
        pytest.param("set titles.generate false; set sessionDir x\n", "set titles.generate false; set sessionDir x\nset titles.generate true\n",
                     id="two-sets"),
        pytest.param("# set titles.generate false\n", "# set titles.generate false\nset titles.generate true\n", id="a-comment"),
        pytest.param("// a note\nset titles.generate false\n", "// a note\nset titles.generate true\n", id="a-slash-comment"),
    ],
)
def test_set_global_replaces_only_the_single_set_lines_of_its_cvar(dirs: Dirs, before: str, after: str) -> None:
    """A line of two commands is not a single-set line (a form feed after the ``;`` is a word
    of the command language, the run of an alias, not a blank): it stays as it was."""
    agent_dir = dirs[0]
    (agent_dir / "config.cfg").write_text(before, newline="")
    EukheSettings(agent_dir).set_global("titles.generate", "true")
    assert (agent_dir / "config.cfg").read_bytes().decode() == after


# -- the descriptions of the declarations ----------------------------------------------------

def test_the_session_switches_are_described_by_the_seeds_names() -> None:
    """S4: "The session switches (transport, steering mode, follow-up mode, auto retry, auto
    compaction, service tier)". The switches carry these names as their descriptions (transport's
    says what it transports); no other declaration has one. (eukhe does not print them yet.)"""
    described = {decl.id: decl.doc for decl in TABLE if decl.doc != ""}
    assert described == {
        "transport": "transport of provider streams",
        "steeringMode": "steering mode",
        "followUpMode": "follow-up mode",
        "retry.enabled": "auto retry",
        "compaction.enabled": "auto compaction",
        "serviceTier": "service tier",
    }


# -- the aliases of an agent (S4: config, then its profile, then its own; a later one replaces) --

ALIAS_CASES: list[tuple[str, dict[str, str], str, list[tuple[str, str]] | str]] = [
    # (name, cfg files of the agent dir, the conversation, what running the line `x` gives)
    ("config.cfg", {"config.cfg": 'alias x "set transport sse"\n'}, "main", [("set transport sse", "ok")]),
    ("the root's profile", {"agents/main.cfg": 'alias x "set transport websocket"\n'}, "main", [("set transport websocket", "ok")]),
    ("the profile over config.cfg", {"config.cfg": 'alias x "set transport sse"\n', "agents/main.cfg": 'alias x "set serviceTier flex"\n'},
     "main", [("set serviceTier flex", "ok")]),
    ("subagent.cfg is not the root's", {"subagent.cfg": 'alias x "set transport sse"\n'}, "main", "ExpandError::Unknown(x)"),
    ("subagent.cfg is a subagent's", {"subagent.cfg": 'alias x "set transport sse"\n'}, "main.reviewer", [("set transport sse", "ok")]),
    ("agents/main.cfg is not a subagent's", {"agents/main.cfg": 'alias x "set transport sse"\n'}, "main.reviewer", "ExpandError::Unknown(x)"),
]


@pytest.mark.parametrize(("files", "conversation", "outcome"), [pytest.param(f, c, o, id=n) for n, f, c, o in ALIAS_CASES])
def test_an_agent_runs_the_aliases_of_its_config_and_its_own_profile(
    dirs: Dirs, files: dict[str, str], conversation: str, outcome: list[tuple[str, str]] | str
) -> None:
    from eukhe.settings.cvar import ExpandError

    agent_dir, _, sessions = dirs
    for name, text in files.items():
        (agent_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (agent_dir / name).write_text(text)
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation(conversation))
        if isinstance(outcome, str):
            with pytest.raises(ExpandError) as failed:
                agent.run_line("x")
            assert failed.value.show() == outcome
        else:
            assert agent.run_line("x") == outcome


# -- settings setters (S4b.2) ----------------------------------------------------------------

def test_a_setter_names_the_global_config_cfg_that_sets_a_global_setting(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "config.cfg").write_text("set defaultModel from-cfg\n")  # defaultModel: Global
    said = config.SettingsManager(registry(), config.Paths(agent_dir)).set("defaultModel", "m")
    assert said.show() == f"Persisted::Shadowed({agent_dir}/config.cfg)"


def test_a_setter_started_over_a_broken_file_sets_once_it_is_fixed(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    path = agent_dir / "settings.json"
    path.write_text("{broken")
    manager = config.SettingsManager(registry(), config.Paths(agent_dir))
    assert manager.loaded == {}
    path.write_text(json.dumps({"transport": "sse"}))  # the user fixes the file
    assert manager.set("retry.maxRetries", 4).show() == "Persisted"
    assert json.loads(path.read_text()) == {"transport": "sse", "retry": {"maxRetries": 4}}
    assert manager.loaded == {"retry": {"maxRetries": 4}}  # the process's copy follows its own sets


# -- trust (S4b.5): trustedProjects, from the global layer only ---------------------------------

def test_only_trusted_projects_trusts_even_when_another_setting_is_a_list(dirs: Dirs) -> None:
    from eukhe.settings.cvar import GLOBAL, LIST, STRING

    agent_dir, project, _ = dirs
    extra = Cvar("extraDirs", CvarType(LIST, item=CvarType(STRING)), GLOBAL, True, False, [])
    custom = Registry([*TABLE, extra])
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)], "extraDirs": ["/elsewhere"]}))
    assert EukheSettings(agent_dir, project, custom).config.trusted
    (agent_dir / "settings.json").write_text(json.dumps({"extraDirs": [str(project)]}))
    assert not EukheSettings(agent_dir, project, custom).config.trusted


# -- agents deeper in the family, profiles refuse Global sets, malformed agent documents ---------

def test_a_grandchild_is_named_by_the_last_part_of_its_conversation(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "helper.cfg").write_text("set maxToolRounds 3\n")
    with Store(sessions).create("s") as session:
        helper = CvarAgent(EukheSettings(agent_dir), session.conversation("main.reviewer.helper"))
        assert helper.name == "helper"
        assert [(a["name"], a["profile"]) for a in helper.family_json()] == [("main", []), ("reviewer", []), ("helper", [("maxToolRounds", 3)])]
        assert helper.value("maxToolRounds") == 3


def test_a_profile_never_sets_a_global_cvar(dirs: Dirs) -> None:
    agent_dir, _, sessions = dirs
    (agent_dir / "agents").mkdir()
    (agent_dir / "agents" / "main.cfg").write_text("set defaultModel from-profile\nset transport sse\n")
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        assert [e.show() for e in agent.errors()] == [
            f"{agent_dir}/agents/main.cfg:1: CvarError::Global(defaultModel): defaultModel is Global: only the global config sets it"
        ]
        assert agent.value("defaultModel") == "" and agent.value("transport") == "sse"
        assert agent.family_json()[0]["profile"] == [("transport", "sse")]


@pytest.mark.parametrize("document", [
    {"sets": {"transport": "sse"}, "aliases": {"x": "set transport sse"}},
    {"sets": "transport", "aliases": "xy"},
    {"sets": None, "aliases": None},
    ["not", "an", "object"],
])
def test_an_agent_document_of_the_wrong_shape_reads_as_no_sets_and_no_aliases(dirs: Dirs, document: Any) -> None:
    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        main = session.conversation("main")
        main.commit(documents={"eukhe.cvar.agent": document})
        agent = CvarAgent(EukheSettings(agent_dir), main)
        assert agent.document() == {"sets": [], "aliases": []}
        assert agent.errors() == [] and agent.value("transport") == "auto"


# -- how a writer writes a JSON document (S4b.1) ------------------------------------------------

def test_a_json_document_is_written_indented_by_two_in_utf_8_with_a_final_newline(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    config.mcp_add(agent_dir / "settings.json", "g\u00eet", {"command": "\u00e9", "args": ["\u2603", 1]})
    assert (agent_dir / "settings.json").read_bytes() == (
        '{\n  "mcpServers": {\n    "g\u00eet": {\n      "command": "\u00e9",\n      "args": [\n        "\u2603",\n        1\n      ]\n'
        '    }\n  }\n}\n'
    ).encode("utf-8")


# -- a document that cannot be read: its path and what is wrong (S4b.1) -------------------------

@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        pytest.param("settings.json", b"[1, 2]", "{P}: not an object", id="not-an-object"),
        pytest.param("settings.json", b'{"version": 2}', "{P}: unknown version (2)", id="unknown-version"),
        pytest.param("settings.json", b'{"version": true}', "{P}: unknown version (true)", id="version-true"),
        pytest.param("settings.json", b'{"version": 1.0}', "{P}: unknown version (1.0)", id="version-1.0"),
        pytest.param("settings.json", b'{"version": "' + b"v" * 80 + b'"}', '{P}: unknown version ("' + "v" * 49 + ")", id="a-long-version-cut-at-50"),
        pytest.param("settings.json", b'{"a": "\xff"}', "{P}: unreadable (not UTF-8 at byte 7)", id="not-utf-8"),
        pytest.param("settings.json", b"{nope", "{P}: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
                     id="not-json"),
        pytest.param("config.cfg", b'set transport "open\n', "{P}: does not parse (line 1: unterminated quote)", id="cfg-does-not-parse"),
    ],
)
def test_a_writer_refuses_a_broken_file_saying_its_path_and_what_is_wrong(dirs: Dirs, name: str, data: bytes, said: str) -> None:
    from eukhe.settings.files import DocumentError

    agent_dir = dirs[0]
    path = agent_dir / name
    path.write_bytes(data)
    with pytest.raises(DocumentError) as refused:
        if name == "config.cfg":
            EukheSettings(agent_dir).set_global("titles.generate", "false")
        else:
            config.mcp_add(path, "git", {"command": "g"})
    assert str(refused.value) == said.replace("{P}", str(path))
    assert path.read_bytes() == data


# -- the settings errors of a config, as the eukhe.settings_error rows show them (S4, S4b.3) ------

GLOBAL_CFG = "\n".join([
    "set transport pigeon",
    "set retry.maxRetries -1",
    'set thinkingBudgets "{\\"low\\": -1}"',
    'set trustedProjects "[1]"',
    "set kernelTransport nope",
    "set bogus 1",
    "toggle retry.enabled",
    'alias a "set transport"',
    'set transport "open',
    "set temperature 1e5",
    "set idleEvictionMinutes soon",
    "set titles.generate yes",
    "bind f1 x; action y; z",
    "# a comment: set transport pigeon",
    "// a comment: set transport pigeon",
    "",
    " \t\r",
    "\x0cset transport sse",
    "set titles.generate maybe",
    "",
])
GLOBAL_SETTINGS = {"transport": "pigeon", "bogus": 1, "a.b": 1, "retry": {"enabled": "yes", "nope": 2}, "mcpServers": {"x": 1},
                   "idleEvictionMinutes": -5}
# (where, what) of each error, in order: the global settings.json, the global config.cfg, the project's files
EXPECTED_ERRORS = [
    ("{A}/settings.json: transport", 'CvarError::BadValue(transport): "pigeon" is not a one of auto|sse|websocket (transport)'),
    ("{A}/settings.json: bogus", "CvarError::Undeclared(bogus): no cvar bogus is declared"),
    ('{A}/settings.json: "a.b"', 'CvarError::Undeclared("a.b"): no cvar "a.b" is declared'),
    ("{A}/settings.json: retry.enabled", 'CvarError::BadValue(retry.enabled): "yes" is not a Bool (retry.enabled)'),
    ("{A}/settings.json: retry.nope", "CvarError::Undeclared(retry.nope): no cvar retry.nope is declared"),
    ("{A}/settings.json: mcpServers.x", "CvarError::BadValue(mcpServers.x): an mcpServers entry is an object"),
    ("{A}/settings.json: idleEvictionMinutes", "CvarError::BadValue(idleEvictionMinutes): -5 is not a NatOrOff (idleEvictionMinutes)"),
    ("{A}/config.cfg:1", "CvarError::BadValue(transport): 'pigeon' is not a one of auto|sse|websocket (transport)"),
    ("{A}/config.cfg:2", "CvarError::BadValue(retry.maxRetries): '-1' is not a Nat (retry.maxRetries)"),
    ("{A}/config.cfg:3", "CvarError::BadValue(thinkingBudgets): '{\"low\": -1}' is not a Map of Nat (thinkingBudgets)"),
    ("{A}/config.cfg:4", "CvarError::BadValue(trustedProjects): '[1]' is not a List of String (trustedProjects)"),
    ("{A}/config.cfg:5", "CvarError::BadValue(kernelTransport): 'nope' is not JSON (kernelTransport)"),
    ("{A}/config.cfg:6", "CvarError::Undeclared(bogus): no cvar bogus is declared"),
    ("{A}/config.cfg:7", "toggle retry.enabled has no meaning in a cfg file"),
    ("{A}/config.cfg:8", "alias a does not parse: set takes 2 words, not 1"),
    ("{A}/config.cfg:9", "does not parse: unterminated quote"),
    ("{A}/config.cfg:10", "CvarError::BadValue(temperature): '1e5' is not a Float (temperature)"),
    ("{A}/config.cfg:11", "CvarError::BadValue(idleEvictionMinutes): 'soon' is not a NatOrOff (idleEvictionMinutes)"),
    ("{A}/config.cfg:12", "CvarError::BadValue(titles.generate): 'yes' is not a Bool (titles.generate)"),
    ("{A}/config.cfg:13", "bind f1 x has no meaning in a cfg file"),
    ("{A}/config.cfg:13", "action y has no meaning in a cfg file"),
    ("{A}/config.cfg:13", "z has no meaning in a cfg file"),
    ("{A}/config.cfg:18", "does not parse: unknown command \x0cset"),  # a form feed is not a blank of the command language
    ("{A}/config.cfg:19", "CvarError::BadValue(titles.generate): 'maybe' is not a Bool (titles.generate)"),
    ("{P}/.eukhe/settings.json: mcpServers", "CvarError::BadValue(mcpServers): mcpServers is an object of entries"),
    ("{P}/.eukhe/settings.json: defaultModel", "CvarError::Global(defaultModel): defaultModel is Global: only the global config sets it"),
    ("{P}/.eukhe/config.cfg:1", "CvarError::Global(sessionDir): sessionDir is Global: only the global config sets it"),
]


def test_each_settings_error_says_where_and_what(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "config.cfg").write_text(GLOBAL_CFG)
    (agent_dir / "settings.json").write_text(json.dumps(GLOBAL_SETTINGS))
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"mcpServers": 5, "defaultModel": "m"}))
    (project / ".eukhe" / "config.cfg").write_text("set sessionDir /tmp/x\n")
    errors = EukheSettings(agent_dir, project).config.errors
    assert [(e.source, e.message) for e in errors] == [
        (where.replace("{A}", str(agent_dir)).replace("{P}", str(project)), what) for where, what in EXPECTED_ERRORS
    ]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("toggle transport", "CvarError::NotBool(transport): transport is not a Bool: it cannot be toggled"),
        ("toggle nosuch", "CvarError::Undeclared(nosuch): no cvar nosuch is declared"),
        ("toggle titles.generate", "CvarError::Global(titles.generate): titles.generate is Global: only the global config sets it"),
        ("set serviceTier fast", "CvarError::BadValue(serviceTier): 'fast' is not a one of auto|default|flex|priority (serviceTier)"),
    ],
    ids=["toggle-a-string", "toggle-undeclared", "toggle-a-global", "set-outside-a-one-of"],  # mutmut reruns judges by plain ids
)
def test_a_refused_command_of_a_session_says_why(dirs: Dirs, line: str, said: str) -> None:
    from eukhe.settings.cvar import CvarError

    agent_dir, _, sessions = dirs
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        verb, cvar, *value = line.split()
        with pytest.raises(CvarError) as refused:
            agent.toggle(cvar) if verb == "toggle" else agent.set(cvar, value[0])
        assert str(refused.value) == said
        assert agent.run_line(line) == [(line, said.split(": ", 1)[0])]  # the outcome shows the error's kind and id


# -- a cfg file that cannot be read (S4: a settings error, and eukhe does not write it) ----------

def test_an_unreadable_cfg_file_reads_as_one_error_and_nothing_else(dirs: Dirs) -> None:
    from eukhe.settings.cfg import CfgFile, SettingsError, read_cfg
    from eukhe.settings.cvar import Cvars

    agent_dir = dirs[0]
    path = agent_dir / "config.cfg"
    path.write_bytes(b"set \xfe\n")
    cvars = Cvars(registry())
    assert read_cfg(path, cvars, local_only=False) == CfgFile(path, [], [], [SettingsError(str(path), "cannot be read: not UTF-8 at byte 4")], False)
    path.write_text("set transport sse\n")
    assert read_cfg(path, cvars, local_only=False) == CfgFile(path, [("transport", "sse")], [], [], True)
    assert read_cfg(agent_dir / "missing.cfg", cvars, local_only=False) == CfgFile(agent_dir / "missing.cfg", [], [], [], True)
    path.unlink()
    path.mkdir()  # a directory: the read fails with the system's words
    assert [e.show() for e in EukheSettings(agent_dir).config.errors] == [f"{path}: cannot be read: Is a directory"]


# -- the in-flight limits of the global settings.json (S4b.4) -----------------------------------

@pytest.mark.parametrize(
    ("settings", "limits"),
    [
        pytest.param(None, {"openai": None, "anthropic": None}, id="no-file"),
        pytest.param({"transport": "sse"}, {"openai": None, "anthropic": None}, id="no-limit"),
        pytest.param({"providerMaxInFlight": {"openai": 2}}, {"openai": 2, "anthropic": None}, id="one-provider"),
        pytest.param({"providerMaxInFlight": {"openai": 0, "anthropic": 2.5}}, {"openai": 0, "anthropic": 1}, id="a-fraction-fails-closed"),
        pytest.param({"providerMaxInFlight": [3]}, {"openai": 1, "anthropic": 1}, id="not-a-map-fails-closed"),
    ],
)
def test_the_in_flight_limit_of_each_provider(dirs: Dirs, settings: dict[str, Any] | None, limits: dict[str, int | None]) -> None:
    agent_dir = dirs[0]
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings))
    loaded = EukheSettings(agent_dir).config
    assert {provider: loaded.limit(provider) for provider in limits} == limits


# -- error texts of the command language -------------------------------------------------------

def test_error_texts_of_the_command_language() -> None:
    from eukhe.settings.cvar import CvarError, ExpandError

    assert str(ExpandError("Cycle", "loop")) == "ExpandError::Cycle(loop)"
    assert str(ExpandError("Unknown", "nosuch")) == "ExpandError::Unknown(nosuch)"
    other = CvarError("Other", "x")  # a kind with no default message says its kind
    assert (other.message, str(other), other.data()) == ("Other", "CvarError::Other(x): Other", {"kind": "Other", "id": "x", "message": "Other"})


def test_a_document_of_version_1_is_read_and_kept(dirs: Dirs) -> None:
    path = dirs[0] / "settings.json"
    path.write_text(json.dumps({"version": 1, "transport": "sse"}))
    assert config.mcp_add(path, "git", {"command": "g"}) == {"version": 1, "transport": "sse", "mcpServers": {"git": {"command": "g"}}}
