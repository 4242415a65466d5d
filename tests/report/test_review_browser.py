"""The review report in a real browser: headless Chromium (Debian's package, /usr/bin/chromium)
driven by Playwright (the Python package, which brings no browser of its own). The test opens the
index from file://, clicks a filter, opens a law, follows its links, and saves screenshots to
build/report/screens/. Without the browser or Playwright it skips and says why (`make browser`
installs Debian's chromium; .ci/run does it before `make test`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_support import FAILING

from spec.review import seeds

ROOT = Path(__file__).resolve().parents[2]
SCREENS = ROOT / "build" / "report" / "screens"
CHROMIUM = os.environ.get("EUKHE_CHROMIUM", "/usr/bin/chromium")
# As the machine notes start it: no sandbox as root, no background connections to a closed network.
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the Python package playwright is not installed (pip install -e '.[dev]')")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium (apt-get, as root)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"script errors in the report: {errors}"


def _shot(page: Any, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / name), full_page=False)


def test_a_filter_shows_only_its_laws(built: Path, page: Any) -> None:
    page.goto((built / "index.html").as_uri())
    rows = page.locator("table.laws tr[data-law]")
    everything = rows.count()
    assert everything > 20 and page.locator("#shown-count").inner_text() == str(everything)
    _shot(page, "index.png")
    page.click("button.filter[data-key='status'][data-value='fail']")
    visible = page.locator("table.laws tr[data-law]:not(.hidden)")
    assert visible.count() == 1 and page.locator("#shown-count").inner_text() == "1"
    assert visible.first.get_attribute("data-status") == "fail"
    assert page.locator("button.filter[data-key='status'][data-value='fail']").get_attribute("aria-pressed") == "true"
    page.click("button.filter[data-key='status'][data-value='']")
    page.click("button.filter[data-key='area'][data-value='director']")
    directors = page.locator("table.laws tr[data-law]:not(.hidden)")
    assert 0 < directors.count() < everything
    assert {directors.nth(i).get_attribute("data-area") for i in range(directors.count())} == {"director"}
    _shot(page, "index-filtered.png")


def test_opening_a_law_shows_its_statement_counterexample_source_and_links(built: Path, page: Any) -> None:
    page.goto((built / "index.html").as_uri())
    page.click(f"a.law-link:has-text('{FAILING.split('/')[1]}')")
    box = page.locator(f"details#law-{FAILING.split('/')[1]}")
    from playwright.sync_api import expect

    # the page opens the box once its document has loaded: waited for, the check retried until then
    expect(box, "the law opens from the link's anchor").to_have_attribute("open", "")
    assert box.locator(".f-counterexample pre").is_visible()
    assert f"test_law[{FAILING}]" in box.locator(".f-replay pre").inner_text()
    assert box.locator(".f-statement").inner_text().strip()
    source = box.locator("details.source")
    assert not source.locator(".highlight").is_visible(), "the property's source is folded"
    source.locator("summary").click()
    assert source.locator(".highlight").is_visible()
    _shot(page, "law.png")
    href = box.locator("a.ref.eukhe").first.get_attribute("href")
    assert href and href.startswith("src/eukhe.")
    page.goto((built / href.split("#")[0]).as_uri() + "#" + href.split("#")[1])
    assert page.locator(f"[id='{href.split('#')[1]}']").count() == 1, "the production link lands on its line"
    _shot(page, "production-source.png")


def test_a_seed_link_lands_on_its_section(built: Path, page: Any) -> None:
    if not seeds.load():
        pytest.skip("the seed texts are not on this machine (EUKHE_SEEDS or ../shared/seeds)")
    page.goto((built / "area-director.html").as_uri())
    page.click("button.filter[data-key='status'][data-value='pass']")
    first = page.locator("details.law:not(.hidden)").first
    first.locator(":scope > summary").click()
    link = first.locator("a.seed")
    anchor = (link.get_attribute("href") or "").split("#")[1]
    link.click()
    page.wait_for_url(f"**/seeds/control.html#{anchor}")
    target = page.locator(f"[id='{anchor}']")
    assert target.count() == 1 and target.is_visible()
    _shot(page, "seed.png")
