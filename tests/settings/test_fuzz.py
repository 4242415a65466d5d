"""Bad input (Hypothesis, the active profile): the command-language parser and settings.json
leaves give only typed errors, never a crash, and a writer never writes over a broken file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from eukhe.settings import config
from eukhe.settings.cvar import Aliases, CvarError, Cvars, ExpandError, ParseError, format_list, parse_list
from eukhe.settings.cvar_table import registry
from eukhe.settings.files import DocumentError

LINE = st.text(alphabet=st.sampled_from(list('set toggle alias bind action "\\;x1 ab\t')), max_size=60) | st.text(max_size=40)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["sse", "off", "retry", "transport"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["retry", "enabled", "maxRetries", "transport",
                                                                                   "mcpServers", "git", "bogus", "providerMaxInFlight"]) | st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(line=LINE, table=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), LINE), max_size=3))
def test_the_command_language_gives_only_typed_errors(line: str, table: list[tuple[str, str]]) -> None:
    aliases = Aliases()
    for name, body in table:
        try:
            aliases.define(name, body)
        except ParseError:
            pass
    cvars = Cvars(registry())
    try:
        commands = parse_list(line)
    except ParseError:
        return
    assert parse_list(format_list(commands)) == commands  # what prints reads back the same
    try:
        expanded = aliases.expand(commands)
    except ExpandError as error:
        assert error.kind in ("Cycle", "Unknown")
        return
    for command in expanded:
        if command.verb == "set":
            try:
                cvars.parse_set(command.args[0], command.args[1], local_only=True)
            except CvarError as error:
                assert error.kind in ("Undeclared", "BadValue", "Global")


@given(document=st.dictionaries(st.text(max_size=12) | st.sampled_from(["retry", "transport", "mcpServers", "version"]), JSON, max_size=5))
def test_settings_leaves_apply_or_are_named(document: dict[str, Any]) -> None:
    found = config.leaves(registry(), document, project=False)
    named = {p for p, _ in found.named}
    assert not set(found.applied) & named
    for key in document:
        if "." in key:  # a key with a dot names no setting: Undeclared, named in quotes (S4b.3)
            assert f'"{key}"' in named
            continue
        assert key in named or key in found.applied or any(p.startswith(key + ".") for p in set(found.applied) | named) or document[key] == {}


@given(raw=st.binary(max_size=40) | JSON.map(lambda v: json.dumps(v).encode()))
def test_a_writer_never_writes_over_a_broken_file(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "settings.json"
        path.write_bytes(raw)
        try:
            config.mcp_add(path, "git", {"command": "g"})
        except DocumentError:
            assert path.read_bytes() == raw
        else:
            assert json.loads(path.read_text())["mcpServers"]["git"] == {"command": "g"}
