"""Entries of a conversation tree: what a commit appends, and what the tree holds.

A ``NewEntry`` is what a caller commits; the store gives it an id and a parent and keeps it
as an ``Entry``. Kinds: user, assistant, tool_call, tool_result, custom (a row with a
``custom_type`` such as ``eukhe.director``), and state (made by the store for a commit that
changes documents only, so the change has its own node in the tree; no view shows it).
A custom row with ``display_only`` reaches the user and never the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Union

from eukhe.session.errors import InvalidCommit

Json = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]
EntryId = int


class Kind(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    CUSTOM = "custom"
    STATE = "state"


@dataclass(frozen=True)
class NewEntry:
    """An entry to commit. ``custom_type`` is required for (and only for) ``Kind.CUSTOM``;
    ``display_only`` is allowed only on custom rows."""

    kind: Kind
    content: object = None  # any JSON value; checked by ``check``
    custom_type: str | None = None
    display_only: bool = False

    def check(self) -> None:
        if self.kind is Kind.STATE:
            raise InvalidCommit("state entries are made by the store, not committed")
        if (self.kind is Kind.CUSTOM) != (self.custom_type is not None):
            raise InvalidCommit(f"a {self.kind.value} entry has custom_type {self.custom_type!r}")
        if self.custom_type is not None and not self.custom_type:
            raise InvalidCommit("custom_type is empty")
        if self.display_only and self.kind is not Kind.CUSTOM:
            raise InvalidCommit("only a custom row can be display-only")
        check_json(self.content, "entry content")


@dataclass(frozen=True)
class Entry:
    """An entry of the tree. ``parent`` is None for the root entry."""

    id: EntryId
    parent: EntryId | None
    kind: Kind
    content: Json = None
    custom_type: str | None = None
    display_only: bool = False

    @property
    def in_model_view(self) -> bool:
        return self.kind is not Kind.STATE and not self.display_only

    @property
    def in_user_view(self) -> bool:
        return self.kind is not Kind.STATE


def user(text: str) -> NewEntry:
    return NewEntry(Kind.USER, text)


def assistant(content: object) -> NewEntry:
    return NewEntry(Kind.ASSISTANT, content)


def tool_call(content: object) -> NewEntry:
    return NewEntry(Kind.TOOL_CALL, content)


def tool_result(content: object) -> NewEntry:
    return NewEntry(Kind.TOOL_RESULT, content)


def row(custom_type: str, content: object, *, display_only: bool = False) -> NewEntry:
    return NewEntry(Kind.CUSTOM, content, custom_type, display_only)


def display(custom_type: str, content: object) -> NewEntry:
    """A display-only row (eukhe.settings_error, eukhe.director, ...): the user sees it, the model never."""
    return NewEntry(Kind.CUSTOM, content, custom_type, True)


def check_json(value: object, what: str) -> None:
    """Refuse a value that JSON cannot hold exactly: only None, bool, int, finite float, str,
    list and dict with str keys round-trip unchanged through a record."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
            raise InvalidCommit(f"{what} holds the float {item!r}, which JSON cannot hold")
        if isinstance(item, list):
            stack.extend(item)
            continue
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise InvalidCommit(f"{what} holds the key {key!r}, not a string")
                stack.append(inner)
            continue
        raise InvalidCommit(f"{what} holds a {type(item).__name__}, not a JSON value")
