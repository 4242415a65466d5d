"""The model picker of the terminal UI: the agent's catalog, one model a line.

``/model`` (and the app.model.select bind) asks the agent for ``get_model_catalog`` and lists
each model with the thinking levels the agent offers for it (inference.md S10 ladder 5: the
agent serves the offered levels; the client computes no ladder) and the service tiers it
honours beyond default (S6.8, the agent's rulebook). Choosing a model sends
``/model PROVIDER/MODEL``; the choice is the screen's result (None when closed). Keys reach
the picker through the app's binds (control.md S4.5: the screen that gets a key runs its own
action): app.interrupt closes it, editor.submit chooses the highlighted model; the arrows move.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from eukhe.agent import protocol as p


def label(model: p.CatalogEntry, current: p.ModelRef | None) -> str:
    mark = "*" if current is not None and (current.provider, current.id) == (model.provider, model.id) else " "
    levels = ", ".join(model.thinking_levels) if model.thinking_levels else "no thinking levels"
    tiers = [tier for tier in model.service_tiers if tier != "default"]
    shown = f"  tiers {', '.join(tiers)}" if tiers else ""
    return f"{mark} {model.provider}/{model.id}  [{levels}]  {model.context_window // 1000}K ctx{shown}"


class ModelPicker(ModalScreen[str | None]):
    DEFAULT_CSS: ClassVar[str] = """
    ModelPicker { align: center middle; }
    ModelPicker > OptionList { width: 90%; max-height: 80%; border: round $accent; }
    ModelPicker > Static { width: 90%; }
    """

    def __init__(self, catalog: p.ModelCatalogEvent, current: p.ModelRef | None) -> None:
        super().__init__()
        self.catalog = catalog
        self.current = current
        self.labels = [label(model, current) for model in catalog.models]

    def compose(self) -> ComposeResult:
        yield Static("pick a model (enter chooses, escape closes)")
        options = [Option(escape(text), id=f"{m.provider}/{m.id}") for text, m in zip(self.labels, self.catalog.models)]
        yield OptionList(*options)
        for error in self.catalog.models_json_errors:
            yield Static(f"models.json: {error}", classes="error", markup=False)

    def on_mount(self) -> None:
        models = self.query_one(OptionList)
        for index, model in enumerate(self.catalog.models):
            if self.current is not None and (model.provider, model.id) == (self.current.provider, self.current.id):
                models.highlighted = index
                break
        else:
            models.highlighted = 0 if self.catalog.models else None
        models.focus()

    def choose(self) -> None:
        models = self.query_one(OptionList)
        index = models.highlighted
        self.dismiss(None if index is None else models.get_option_at_index(index).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
