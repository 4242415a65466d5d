"""The settings of a session (control.md S4): ``EukheSettings`` (the config and the profiles of
an agent dir and a project), ``CvarAgent`` (one conversation's agent: its family, its own sets
in the conversation document ``eukhe.cvar.agent``, /set, /toggle, /alias and /cvar lines,
/set --global, /cvar save) and the ``eukhe.settings_error`` rows.

The family of a conversation is its chain of conversations, root first (``main``, then
``main.reviewer``, ...): each agent's layers are its profile (the root: agents/main.cfg; a
subagent: subagent.cfg, then agents/<name>.cfg) and its own sets, read from the
``eukhe.cvar.agent`` document of its conversation as of the head. So a rewind or a fork
restores the sets, and a spawn carries the parent's family (``family_json`` gives it to a
create config as ``cvarFamily``).

The document is ``{"sets": [[id, value], ...], "aliases": [[name, body], ...]}``, committed on
each change. An alias of the document that does not parse is a settings error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eukhe.session import Conversation, display
from eukhe.settings import config as configmod
from eukhe.settings.cfg import SettingsError, check_parses, parse_cfg, read_cfg, rewrite, write_sets
from eukhe.settings.cvar import (
    ALIAS,
    BAD_VALUE,
    SET,
    TOGGLE,
    AgentLayers,
    Aliases,
    CvarError,
    Cvars,
    Layer,
    ParseError,
    Registry,
    parse_list,
)
from eukhe.settings.cvar_table import bound_error
from eukhe.settings.cvar_table import registry as default_registry
from eukhe.settings.files import update_text

CVAR_DOC = "eukhe.cvar.agent"
ERROR_ROW = "eukhe.settings_error"
ROOT = "main"


def agent_name(conversation: str) -> str:
    return conversation.rsplit(".", 1)[-1]


def parse_bounded(cvars: Cvars, cvar: str, text: str, *, local_only: bool) -> Any:
    """The value of a set made at the front door (/set, /set --global, a /cvar line): the set's
    own checks (Cvars.parse_set), and a natural no larger than its use takes (cvar_table.largest),
    so a value a set accepts is one every use of it takes. CvarError BadValue past it."""
    value = cvars.parse_set(cvar, text, local_only=local_only)
    why = bound_error(cvar, value)
    if why is not None:
        raise CvarError(BAD_VALUE, cvar, f"{why} ({cvar})")
    return value


class EukheSettings:
    """The config of an agent dir (and a project), read again by ``reload``."""

    def __init__(self, agent_dir: Path, project_dir: Path | None = None, registry: Registry | None = None) -> None:
        self.paths = configmod.Paths(Path(agent_dir), None if project_dir is None else Path(project_dir))
        self.registry = registry or default_registry()
        self.reload()

    def reload(self) -> None:
        self.config = configmod.load(self.registry, self.paths)
        self.cvars = Cvars(self.registry, self.config.layers)

    def agent_cfg(self, name: str) -> Path:
        return self.paths.agent_dir / "agents" / f"{name}.cfg"

    def profile(self, name: str, root: bool) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[SettingsError]]:
        """(sets, aliases, errors) of an agent's profile files."""
        files = [self.agent_cfg(name)] if root else [self.paths.agent_dir / "subagent.cfg", self.agent_cfg(name)]
        sets: list[tuple[str, Any]] = []
        aliases: list[tuple[str, Any]] = []
        errors: list[SettingsError] = []
        for path in files:
            read = read_cfg(path, self.cvars, local_only=True)
            sets += read.sets
            aliases += read.aliases
            errors += read.errors
        return sets, aliases, errors

    def set_global(self, cvar: str, text: str) -> Any:
        """/set --global: the set goes to the global config.cfg (read, change, write under its lock)."""
        value = parse_bounded(self.cvars, cvar, text, local_only=False)
        write_sets(self.paths.global_cfg, [(cvar, value)])
        self.reload()
        return value

    def toggle_global(self, cvar: str) -> bool:
        """A toggle in /set --global flips the global layer's value only; the read of the value
        and the write happen under the lock of the global config.cfg (a file with a line that
        does not parse is refused: DocumentError, nothing written)."""
        path = self.paths.global_cfg
        flipped: list[bool] = []

        def change(text: str) -> str:
            check_parses(path, text)
            self.reload()
            fresh = parse_cfg(path, text, self.cvars, local_only=False)
            layers = [layer for layer in self.config.layers if layer.source != "global config.cfg"]
            layers.append(Layer("global config.cfg", False, fresh.sets))
            flipped.append(Cvars(self.registry, layers).global_toggled(cvar))
            return rewrite(text, {cvar}, [(cvar, flipped[0])])

        update_text(path, change)
        self.reload()
        return flipped[0]


class CvarAgent:
    """The agent of one conversation."""

    def __init__(self, settings: EukheSettings, conversation: Conversation) -> None:
        self.settings = settings
        self.conversation = conversation
        self.name = agent_name(conversation.name)

    def _chain(self) -> list[Conversation]:
        chain = [self.conversation]
        session = self.conversation.session
        while chain[0].parent is not None:
            chain.insert(0, session.conversation(chain[0].parent))
        return chain

    def document(self, conversation: Conversation | None = None) -> dict[str, Any]:
        value = (conversation or self.conversation).document(CVAR_DOC)
        if not isinstance(value, dict):
            return {"sets": [], "aliases": []}
        sets, aliases = value.get("sets"), value.get("aliases")
        return {"sets": list(sets) if isinstance(sets, list) else [], "aliases": list(aliases) if isinstance(aliases, list) else []}

    def family(self) -> list[AgentLayers]:
        out = []
        for conv in self._chain():
            name = agent_name(conv.name)
            profile, _, _ = self.settings.profile(name, conv.parent is None)
            out.append(AgentLayers(name, profile, [(str(k), v) for k, v in self.document(conv)["sets"]]))
        return out

    def family_json(self) -> list[dict[str, Any]]:
        """The family a spawn carries (``cvarFamily`` of the create config)."""
        return [{"name": a.name, "profile": a.profile, "sets": a.sets} for a in self.family()]

    def aliases(self) -> tuple[Aliases, list[SettingsError]]:
        table = Aliases()
        errors: list[SettingsError] = []
        for name, body in self.settings.config.aliases:
            table.define(name, body)
        _, profile_aliases, _ = self.settings.profile(self.name, self.conversation.parent is None)
        for name, body in profile_aliases:
            table.define(name, body)
        for item in self.document()["aliases"]:
            try:
                table.define(str(item[0]), str(item[1]))
            except (ParseError, IndexError, TypeError) as error:
                errors.append(SettingsError(f"{self.conversation.name}: {CVAR_DOC}", f"alias {item!r} does not parse: {error}"))
        return table, errors

    def value(self, cvar: str) -> Any:
        return self.settings.cvars.value(self.family(), cvar)

    def errors(self) -> list[SettingsError]:
        """Every settings error of this session's agent: the config's, its profile files',
        refused sets of the family, aliases of the agent state that do not parse."""
        found = list(self.settings.config.errors)
        _, _, profile_errors = self.settings.profile(self.name, self.conversation.parent is None)
        found += profile_errors
        found += self.aliases()[1]
        return found

    def run_line(self, text: str) -> list[tuple[str, str]]:
        """A session line: parse, expand with the agent's aliases (a failing expansion runs
        nothing), run each command, and commit the document once if it changed. Raises
        ParseError or ExpandError; a refused command's outcome is its CvarError."""
        table, _ = self.aliases()
        commands = table.expand(parse_list(text))
        doc = self.document()
        family = self.family()
        outcomes: list[tuple[str, str]] = []
        changed = False
        for command in commands:
            try:
                if command.verb == SET:
                    value = parse_bounded(self.settings.cvars, command.args[0], command.args[1], local_only=True)
                    family[-1].sets.append((command.args[0], value))
                    doc["sets"].append([command.args[0], value])
                elif command.verb == TOGGLE:
                    value = self.settings.cvars.toggled(family, command.args[0])
                    family[-1].sets.append((command.args[0], value))
                    doc["sets"].append([command.args[0], value])
                elif command.verb == ALIAS:
                    parse_list(command.args[1])
                    doc["aliases"] = [a for a in doc["aliases"] if a[0] != command.args[0]] + [[command.args[0], command.args[1]]]
                else:
                    outcomes.append((str(command), "client-only"))
                    continue
                changed = True
                outcomes.append((str(command), "ok"))
            except CvarError as error:
                outcomes.append((str(command), error.show()))
            except ParseError as error:
                outcomes.append((str(command), f"ParseError({error})"))
        if changed:
            self.conversation.commit(documents={CVAR_DOC: doc})
        return outcomes

    def set(self, cvar: str, text: str) -> Any:
        """/set on the agent; raises CvarError when refused."""
        value = parse_bounded(self.settings.cvars, cvar, text, local_only=True)
        doc = self.document()
        doc["sets"].append([cvar, value])
        self.conversation.commit(documents={CVAR_DOC: doc})
        return value

    def toggle(self, cvar: str) -> bool:
        value = self.settings.cvars.toggled(self.family(), cvar)
        doc = self.document()
        doc["sets"].append([cvar, value])
        self.conversation.commit(documents={CVAR_DOC: doc})
        return value

    def save(self) -> list[tuple[str, Any]]:
        """/cvar save: the agent's sets of persist cvars to agents/<name>.cfg."""
        written = self.settings.cvars.written(self.family()[-1])
        write_sets(self.settings.agent_cfg(self.name), written)
        return written

    def show_errors(self) -> list[str]:
        """Append one eukhe.settings_error row per distinct error not yet shown in this session
        (at open, and after a reload for each new error). Returns the rows appended."""
        main = self.conversation.session.conversation(ROOT)
        shown = {e.content for e in main.user_view() if e.custom_type == ERROR_ROW}
        new: list[str] = []
        for error in self.errors():
            text = error.show()
            if text not in shown and text not in new:
                new.append(text)
        if new:
            main.commit([display(ERROR_ROW, text) for text in new])
        return new

