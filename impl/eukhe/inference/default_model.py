"""The saved default model (inference.md S6 "models.json and the saved default model").

resolve_default runs ``bend.default_model.resolve`` as the compiled core; this module builds its
inputs from the registry and credentials, and turns its answer into the session's model, the
display-only eukhe.default_model row and the typed DefaultUnusable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bend import default_model as compiled

ROW_KIND = "eukhe.default_model"


class DefaultUnusable(Exception):
    """The saved default's provider lacks credentials: no substitute provider is used."""

    def __init__(self, provider: str, model: str) -> None:
        super().__init__(f"DefaultUnusable: saved default {provider}/{model}: provider {provider} has no credentials; run `eukhe login {provider}`")
        self.provider = provider
        self.model = model


@dataclass(frozen=True)
class SessionModel:
    model: tuple[str, str] | None  # None: the session opens modelless
    row: dict[str, object] | None
    error: DefaultUnusable | None


def resolve_default(
    saved: tuple[str, str] | None,
    catalog: Iterable[tuple[str, str]],
    enabled: Iterable[tuple[str, str]] | None,
    keyed: Iterable[str],
    chain: Sequence[tuple[str, str]],
) -> SessionModel:
    world = compiled.World(tuple(catalog), None if enabled is None else tuple(enabled), tuple(keyed), tuple(chain))
    answer = compiled.resolve(saved, world)
    row: dict[str, object] | None = None
    if answer.row is not None:
        row = {
            "kind": ROW_KIND,
            "saved": f"{answer.row.saved[0]}/{answer.row.saved[1]}",
            "reason": answer.row.reason,
            "replacement": None if answer.row.replacement is None else f"{answer.row.replacement[0]}/{answer.row.replacement[1]}",
        }
    error = None
    if answer.error is not None and saved is not None:
        error = DefaultUnusable(saved[0], saved[1])
    return SessionModel(answer.model, row, error)
