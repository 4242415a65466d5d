"""Config documents: the model of control.md S4b (bend/config.bend).

Read it next to 000_f7323c157e80a40d.txt, S4b. Values are ``bend.cvar`` values (``Obj`` for a
JSON object). A file is missing, unreadable, not JSON, or JSON text holding a value.

- S4b.1 read-modify-write: a writer reads the file (only a missing file reads as empty; one
  that cannot be read, is not JSON, is not an object or has a version other than 1 is an
  error, and nothing is written), applies its change (put or remove one path), and writes
  the result; every other key keeps its value.
- S4b.2 setters: a setter changes the document on disk, whatever copy it loaded; it refuses a
  value its setting does not hold; when a higher layer sets the same setting it says which
  file (Persisted::Shadowed, naming the highest such file).
- S4b.3 leaves: each leaf (a value that is not an object, or the whole value of a cvar)
  applies or is named by a CvarError (BadValue, Undeclared; Global in a project file). The
  known top-level keys that are not cvars are ``version`` and ``mcpServers``, whose entries
  are leaves applied as units.
- S4b.4 limits: providerMaxInFlight; an entry that is not a whole number limits its provider
  to 1; a value that is not a map limits each provider to 1; no value: no limit.
- S4b.5 trust: an untrusted project's guarded items are withheld (the limits the seed lists,
  the keys that run code, the project SYSTEM.md and APPEND_SYSTEM.md); trustedProjects comes
  from the global layers only.
- S4b.6 mcpServers: a project entry replaces the global entry of its name whole.

``SETTINGS`` is the part of the declaration table the config scenarios use (the same ids,
types and scopes as impl/eukhe/settings/cvar_table.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from bend.cvar import (  # re-exported: the config rules speak of cvar values and sets
    BOOL as BOOL,
    ENUM as ENUM,
    GLOBAL as GLOBAL,
    LIST as LIST,
    LOCAL as LOCAL,
    MAP as MAP,
    NAT as NAT,
    NAT_OR_OFF as NAT_OR_OFF,
    STRING as STRING,
    Decl as Decl,
    Layer as Layer,
    Obj as Obj,
    Set as Set,
    Type as Type,
    Value as Value,
    check as check,
    config_value as config_value,
    from_json as from_json,
    has_type as has_type,
    is_int as is_int,
    lookup as lookup,
    show as show,
)

_NAT = Type(NAT)
SETTINGS: tuple[Decl, ...] = (
    Decl("retry.enabled", Type(BOOL), LOCAL, True, True, True),
    Decl("retry.maxRetries", _NAT, LOCAL, True, False, 3),
    Decl("retry.failover.maxRetries", _NAT, LOCAL, True, False, 2),
    Decl("transport", Type(ENUM, ("auto", "sse", "websocket")), LOCAL, True, True, "auto"),
    Decl("compaction.keepRecentTokens", _NAT, LOCAL, True, False, 40000),
    Decl("directors.maxSteps", _NAT, LOCAL, True, False, 200),
    Decl("autonomous.enabled", Type(BOOL), LOCAL, True, True, False),
    Decl("maxToolRounds", _NAT, LOCAL, True, False, 50),
    Decl("subagentMaxConcurrency", _NAT, LOCAL, True, False, 4),
    Decl("thinkingBudgets", Type(MAP, (), _NAT), LOCAL, True, False, Obj(())),
    Decl("defaultModel", Type(STRING), GLOBAL, True, False, ""),
    Decl("providerMaxInFlight", Type(MAP, (), _NAT), GLOBAL, True, False, Obj(())),
    Decl("idleEvictionMinutes", Type(NAT_OR_OFF), GLOBAL, True, False, "off"),
    Decl("trustedProjects", Type(LIST, (), Type(STRING)), GLOBAL, True, False, ()),
    Decl("kernelTransport", Type(MAP, (), Type(STRING)), GLOBAL, True, False, Obj(())),
    Decl("subagentStallMs", _NAT, LOCAL, True, False, 300000),
    Decl("toolBlockingBudgetMs", _NAT, LOCAL, True, False, 120000),
    Decl("directors.stackCap", _NAT, LOCAL, True, False, 8),
    Decl("directors.stallSteps", _NAT, LOCAL, True, False, 3),
    Decl("autonomous.maxContinuations", _NAT, LOCAL, True, False, 20),
    Decl("sessionArchive.maxAgeDays", Type(NAT_OR_OFF), GLOBAL, True, False, "off"),
    Decl("sessionArchive.maxCount", Type(NAT_OR_OFF), GLOBAL, True, False, "off"),
)

MISSING, UNREADABLE, INVALID, TEXT = "missing", "unreadable", "invalid", "text"
NOT_JSON, NOT_OBJECT, UNKNOWN_VERSION = "not JSON", "not an object", "unknown version"
KNOWN_TOP = ("version", "mcpServers")
# S4b.5: what an untrusted project may not change
GUARDED_IDS = ("maxToolRounds", "subagentMaxConcurrency", "subagentStallMs", "toolBlockingBudgetMs", "thinkingBudgets",
               "retry.maxRetries", "retry.failover.maxRetries", "mcpServers", "kernelTransport", "SYSTEM.md", "APPEND_SYSTEM.md")
GUARDED_PREFIXES = ("autonomous", "directors")


@dataclass(frozen=True)
class File:
    kind: str  # missing, unreadable, invalid (not JSON text), text (JSON text of ``value``)
    value: Value = None


def get(obj: Obj, key: str) -> tuple[bool, Value]:
    for k, v in obj.pairs:
        if k == key:
            return True, v
    return False, None


def put(obj: Obj, key: str, value: Value) -> Obj:
    kept = tuple(p for p in obj.pairs if p[0] != key)
    return Obj(tuple(sorted(kept + ((key, value),))))


def remove(obj: Obj, key: str) -> Obj:
    return Obj(tuple(p for p in obj.pairs if p[0] != key))


def read(f: File) -> Obj | str:
    """The document of a file, or why it cannot be read (S4b.1)."""
    if f.kind == MISSING:
        return Obj(())
    if f.kind == UNREADABLE:
        return UNREADABLE
    if f.kind == INVALID:
        return NOT_JSON
    if not isinstance(f.value, Obj):
        return NOT_OBJECT
    present, version = get(f.value, "version")
    if present and not (is_int(version) and version == 1):
        return UNKNOWN_VERSION
    return f.value


@dataclass(frozen=True)
class Change:
    """Put ``value`` at ``path`` (remove=False) or remove the key at ``path`` (remove=True)."""

    path: tuple[str, ...]
    value: Value
    remove: bool


def apply(obj: Obj, change: Change) -> Obj:
    """The document with the change made: the objects on the way are kept or made."""
    head = change.path[0]
    if len(change.path) == 1:
        return remove(obj, head) if change.remove else put(obj, head, change.value)
    present, inner = get(obj, head)
    if not isinstance(inner, Obj):
        if change.remove:
            return obj
        inner = Obj(())
    return put(obj, head, apply(inner, Change(change.path[1:], change.value, change.remove)))


def rmw(f: File, change: Change) -> tuple[File, str | None]:
    """A writer (S4b.1): the file after the write, and the error (None: written)."""
    doc = read(f)
    if isinstance(doc, str):
        return f, doc
    return File(TEXT, apply(doc, change)), None


def path_of(cvar: str) -> tuple[str, ...]:
    parts: tuple[str, ...] = ()
    word = ""
    for ch in cvar:
        if ch == ".":
            parts, word = parts + (word,), ""
        else:
            word = word + ch
    return parts + (word,)


def shadowed(reg: tuple[Decl, ...], higher: tuple[tuple[str, bool, tuple[Set, ...]], ...], cvar: str) -> str | None:
    """The highest file of the higher layers (name, project, sets) with a valid set of cvar."""
    found: str | None = None
    for name, project, sets in higher:
        for s in sets:
            if s.id == cvar and check(reg, s, project) is None:
                found = name
    return found


def setter(reg: tuple[Decl, ...], disk: File, loaded: File, cvar: str, value: Value,
           higher: tuple[tuple[str, bool, tuple[Set, ...]], ...]) -> tuple[File, str]:
    """A settings setter (S4b.2) on the global settings.json: writes the document on disk (the
    loaded copy plays no part), refuses a value its setting does not hold."""
    decl = lookup(reg, cvar)
    if decl is None:
        return disk, "CvarError::Undeclared(" + cvar + ")"
    e = check(reg, Set(cvar, value), False)
    if e is not None:
        return disk, "CvarError::" + e.kind + "(" + cvar + ")"
    after, error = rmw(disk, Change(path_of(cvar), value, False))
    if error is not None:
        return disk, "refused: " + error
    where = shadowed(reg, higher, cvar)
    return after, "Persisted" if where is None else "Persisted::Shadowed(" + where + ")"


# -- leaves (S4b.3) -------------------------------------------------------------------------


def _prefix_of_a_cvar(reg: tuple[Decl, ...], path: str) -> bool:
    for d in reg:
        if d.id.startswith(path + "."):
            return True
    return False


def quoted(key: str) -> str:
    """A key with a dot, as a diagnostic names it: in double quotes, so that it never reads as a
    path of nested keys (no setting's id holds a quote)."""
    return '"' + key + '"'


def leaves(reg: tuple[Decl, ...], doc: Obj, project: bool) -> tuple[tuple[tuple[str, Value], ...], tuple[tuple[str, str], ...]]:
    """(applied leaves, named leaves with their CvarError kind) of a settings document."""
    applied: tuple[tuple[str, Value], ...] = ()
    named: tuple[tuple[str, str], ...] = ()
    todo: tuple[tuple[str, Obj], ...] = (("", doc),)
    while todo:
        prefix, obj = todo[0]
        todo = todo[1:]
        for key, v in obj.pairs:
            path = prefix + key
            if prefix == "" and key == "version":
                applied = applied + ((path, v),)
            elif prefix == "" and key == "mcpServers":
                if isinstance(v, Obj):
                    for name, entry in v.pairs:
                        if isinstance(entry, Obj):
                            applied = applied + (("mcpServers." + name, entry),)
                        else:
                            named = named + (("mcpServers." + name, "BadValue"),)
                else:
                    named = named + ((path, "BadValue"),)
            elif "." in key:  # the Settings type's keys are names: a key with a dot names no setting
                named = named + ((prefix + quoted(key), "Undeclared"),)
            elif lookup(reg, path) is not None:
                e = check(reg, Set(path, v), project)
                if e is None:
                    applied = applied + ((path, v),)
                else:
                    named = named + ((path, e.kind),)
            elif isinstance(v, Obj) and _prefix_of_a_cvar(reg, path):
                todo = todo + ((path + ".", v),)
            else:
                named = named + ((path, "Undeclared"),)
    return applied, named


# -- limits (S4b.4) ---------------------------------------------------------------------------


def in_flight(present: bool, raw: Value, provider: str) -> int | None:
    """The in-flight limit of a provider (None: no limit)."""
    if not present:
        return None
    if not isinstance(raw, Obj):
        return 1
    has, entry = get(raw, provider)
    if not has:
        return None
    if is_int(entry) and entry >= 0:  # type: ignore[operator]
        return entry  # type: ignore[return-value]
    return 1


# -- trust (S4b.5) and mcpServers (S4b.6) ------------------------------------------------------


def guarded(item: str) -> bool:
    for g in GUARDED_IDS:
        if item == g or item.startswith(g + "."):
            return True
    for p in GUARDED_PREFIXES:
        if item == p or item.startswith(p + "."):
            return True
    return False


def trusted(project: str, global_layers: tuple[tuple[Set, ...], ...]) -> bool:
    """trustedProjects from the global layers only (global settings.json, then global config.cfg)."""
    value: tuple[Value, ...] = ()
    for sets in global_layers:
        for s in sets:
            if s.id == "trustedProjects" and isinstance(s.value, tuple):
                value = s.value
    return project in value


def project_items(items: tuple[str, ...], is_trusted: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(applied, withheld) items of a project: all apply when trusted; else guarded are withheld."""
    if is_trusted:
        return items, ()
    return tuple(i for i in items if not guarded(i)), tuple(i for i in items if guarded(i))


def merge_servers(global_entries: Obj, project_entries: Obj) -> Obj:
    """S4b.6: each project entry replaces the global entry of its name whole."""
    out = global_entries
    for name, entry in project_entries.pairs:
        out = put(out, name, entry)
    return out


def effective(reg: tuple[Decl, ...], global_doc: Obj, project_doc: Obj, global_cfg: tuple[Set, ...],
              project_cfg: tuple[Set, ...], prompts: tuple[str, ...], is_trusted: bool) -> tuple[tuple[tuple[str, Value], ...], tuple[str, ...], tuple[str, ...]]:
    """The config (S4): global settings.json < project settings.json < global config.cfg <
    project config.cfg, the project's guarded items withheld when it is untrusted. Returns the
    value of each declared id and each mcpServers entry, the project prompts that apply, and
    the withheld items (sorted)."""
    g_applied, _ = leaves(reg, global_doc, False)
    p_applied, _ = leaves(reg, project_doc, True)
    p_items = (tuple(k for k, _ in p_applied if k != "version") + tuple(s.id for s in project_cfg if check(reg, s, True) is None)
               + prompts)
    kept, withheld = project_items(p_items, is_trusted)
    layers = (
        Layer("global settings.json", False, tuple(Set(k, v) for k, v in g_applied)),
        Layer("project settings.json", True, tuple(Set(k, v) for k, v in p_applied if k in kept)),
        Layer("global config.cfg", False, global_cfg),
        Layer("project config.cfg", True, tuple(s for s in project_cfg if s.id in kept)),
    )
    values = tuple((d.id, config_value(reg, layers, d.id, False)) for d in reg)
    g_servers = Obj(tuple((k[len("mcpServers."):], v) for k, v in g_applied if k.startswith("mcpServers.")))
    p_servers = Obj(tuple((k[len("mcpServers."):], v) for k, v in p_applied if k.startswith("mcpServers.") and k in kept))
    servers = merge_servers(g_servers, p_servers)
    applied_prompts = tuple(x for x in prompts if x in kept)
    return values + tuple(("mcpServers." + k, v) for k, v in servers.pairs), applied_prompts, tuple(sorted(set(withheld)))


# -- the bridge transcript ----------------------------------------------------------------------

DOCS = ("settings", "project", "mcp", "auth")


def file_of(raw: dict[str, object]) -> File:
    state = raw["state"]
    if state == "missing":
        return File(MISSING)
    if state == "unreadable":
        return File(UNREADABLE)
    if state == "invalid":
        return File(INVALID)
    content = from_json(raw.get("content"))
    if state == "other-version" and isinstance(content, Obj):
        content = put(content, "version", 2)
    return File(TEXT, content)


def show_file(f: File) -> str:
    if f.kind == TEXT:
        return show(f.value)
    return f.kind


def _change(event: dict[str, object]) -> tuple[str, Change]:
    writer = event["writer"]
    name = str(event.get("name", ""))
    if writer == "mcp add":
        return "settings", Change(("mcpServers", name), from_json(event["entry"]), False)
    if writer == "mcp remove":
        return "settings", Change(("mcpServers", name), None, True)
    if writer == "connection":
        return "mcp", Change(("connections", name), from_json(event["entry"]), False)
    if writer == "auth set":
        return "auth", Change((name,), from_json(event["entry"]), False)
    return "auth", Change((name,), None, True)


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the config bridge: one line after each event."""
    files = {d: File(MISSING) for d in DOCS}
    cfgs: dict[str, tuple[Set, ...]] = {"global config.cfg": (), "project config.cfg": ()}
    lines = []
    for number, event in enumerate(events):
        kind = event["do"]
        if kind == "file":
            files[str(event["doc"])] = file_of(event)
            said = "file " + str(event["doc"]) + " " + show_file(files[str(event["doc"])])
        elif kind == "cfg":
            cfgs[str(event["which"])] = tuple(Set(str(p[0]), from_json(p[1])) for p in event["sets"])  # type: ignore[attr-defined]
            said = "cfg " + str(event["which"])
        elif kind == "write":
            doc, change = _change(event)
            files[doc], error = rmw(files[doc], change)
            said = str(event["writer"]) + " " + ("written" if error is None else "refused: " + error) + " " + doc + "=" + show_file(files[doc])
        elif kind == "setter":
            loaded = file_of(event["loaded"])  # type: ignore[arg-type]
            higher = (("global config.cfg", False, cfgs["global config.cfg"]),
                      ("project settings.json", True, _sets_of_doc(files["project"])),
                      ("project config.cfg", True, cfgs["project config.cfg"]))
            files["settings"], result = setter(SETTINGS, files["settings"], loaded, str(event["id"]), from_json(event["value"]), higher)
            said = "setter " + str(event["id"]) + " " + result + " settings=" + show_file(files["settings"])
        elif kind == "load":
            loaded_doc = read(files[str(event["doc"])])
            if isinstance(loaded_doc, str):
                said = "load " + str(event["doc"]) + " error " + loaded_doc
            else:
                applied, named = leaves(SETTINGS, loaded_doc, event["doc"] == "project")
                said = ("load " + str(event["doc"]) + " applied [" + ", ".join(sorted(p for p, _ in applied)) + "] named ["
                        + ", ".join(sorted(f"{p}: {k}" for p, k in named)) + "]")
        elif kind == "limits":
            present = "value" in event
            raw = from_json(event.get("value"))
            said = "limits " + " ".join(f"{p}={'none' if (l := in_flight(present, raw, p)) is None else l}" for p in event["providers"])  # type: ignore[attr-defined]
        elif kind == "effective":
            g_read = read(files["settings"])
            p_read = read(files["project"])
            g = Obj(()) if isinstance(g_read, str) else g_read
            p = Obj(()) if isinstance(p_read, str) else p_read
            if True:
                gsets = tuple(Set(k, v) for k, v in leaves(SETTINGS, g, False)[0])
                is_trusted = trusted("PROJECT", (gsets, cfgs["global config.cfg"]))
                values, prompts, withheld = effective(SETTINGS, g, p, cfgs["global config.cfg"], cfgs["project config.cfg"],
                                                      tuple(str(x) for x in event["prompts"]), is_trusted)  # type: ignore[attr-defined]
                wanted = tuple(str(i) for i in event["ids"])  # type: ignore[attr-defined]
                said = ("effective trusted=" + ("yes" if is_trusted else "no") + " "
                        + " ".join(f"{k}={show(v)}" for k, v in sorted(values, key=lambda kv: (kv[0].startswith("mcpServers."), kv[0]))
                                 if k in wanted or k.startswith("mcpServers."))
                        + " prompts [" + ",".join(prompts) + "] withheld [" + ",".join(withheld) + "]")
        else:
            raise ValueError(f"event {number}: unknown action {kind!r}")
        lines.append(f"{number} {said}")
    return lines


def _sets_of_doc(f: File) -> tuple[Set, ...]:
    doc = read(f)
    if isinstance(doc, str):
        return ()
    return tuple(Set(k, v) for k, v in leaves(SETTINGS, doc, False)[0])


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
