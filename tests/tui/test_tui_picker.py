"""The model picker and the draft's completion under Textual's pilot: the picker as the app shows
it for a catalog the agent sent (models.json's errors under the list; no current model: the first
highlighted; enter on a highlighted option chooses it), and tab completing a command word to its
matches' common prefix."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from eukhe.agent import protocol as p
from eukhe.tui.editor import Draft
from eukhe.tui.picker import ModelPicker

SIZE = (100, 30)


def entry(provider: str, model: str) -> p.CatalogEntry:
    return p.CatalogEntry(
        provider=provider, id=model, name=model, api="openai-completions", reasoning=False, context_window=32_000, max_tokens=4_000,
        thinking_levels=[], source="models.json", service_tiers=["default"],
    )  # fmt: skip


class Picking(App[None]):
    """An app that opens the picker on ``catalog`` and keeps what it was dismissed with."""

    def __init__(self, catalog: p.ModelCatalogEvent, current: p.ModelRef | None = None) -> None:
        super().__init__()
        self.catalog = catalog
        self.current = current
        self.picked: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(ModelPicker(self.catalog, self.current), self.picked.append)


def test_the_picker_lists_models_json_errors_and_enter_chooses_the_highlighted_model() -> None:
    catalog = p.ModelCatalogEvent(models=[entry("local", "a"), entry("local", "b")], models_json_errors=["providers.x: no baseUrl", "[bold]x[/bold]: not markup"])

    async def main() -> None:
        app = Picking(catalog)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            picker = app.screen
            assert isinstance(picker, ModelPicker)
            errors = [str(w.render()) for w in picker.query(".error").results(Static)]
            assert errors == ["models.json: providers.x: no baseUrl", "models.json: [bold]x[/bold]: not markup"]  # text, never markup
            models = picker.query_one(OptionList)
            assert models.highlighted == 0  # no current model: the first
            await pilot.press("down", "enter")
            await pilot.pause()
        assert app.picked == ["local/b"]

    asyncio.run(main())


def test_the_current_model_is_marked_and_highlighted() -> None:
    catalog = p.ModelCatalogEvent(models=[entry("local", "a"), entry("local", "b"), entry("local", "c")], models_json_errors=[])

    async def main() -> None:
        app = Picking(catalog, p.ModelRef(provider="local", id="b"))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            picker = app.screen
            assert isinstance(picker, ModelPicker)
            assert [label[0] for label in picker.labels] == [" ", "*", " "]
            assert picker.query_one(OptionList).highlighted == 1
            await pilot.press("enter")
            await pilot.pause()
        assert app.picked == ["local/b"]

    asyncio.run(main())


def test_an_empty_catalog_highlights_nothing_and_escape_is_left_to_the_app() -> None:
    async def main() -> None:
        app = Picking(p.ModelCatalogEvent(models=[], models_json_errors=[]))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ModelPicker) and app.screen.query_one(OptionList).highlighted is None
            app.screen.choose()
            await pilot.pause()
        assert app.picked == [None]

    asyncio.run(main())


class Drafting(App[None]):
    def compose(self) -> ComposeResult:
        yield Draft()


def test_tab_completes_a_command_word_to_the_common_prefix_of_its_matches() -> None:
    async def main() -> None:
        app = Drafting()
        async with app.run_test(size=SIZE) as pilot:
            draft = app.query_one(Draft)
            draft.load_text("/f")
            assert draft.complete_draft() == ["/force", "/fork"]
            assert draft.text == "/for" and draft.cursor_location == (0, 4)
            draft.load_text("/forc")
            assert draft.complete_draft() == ["/force"]
            assert draft.text == "/force "
            draft.load_text("hello")
            assert draft.complete_draft() == [] and draft.text == "hello"
            await pilot.pause()

    asyncio.run(main())
