"""With the keyboard, the picture shows its crosshair as soon as it has the focus, and Enter
clicks where the crosshair shows: never at a place the person has not seen (on Misleading_Click
the picture's centre, where the crosshair starts, is the decoy)."""

import pytest

from annotation.agents.browser import wait_submitted
from annotation.models import Attempt, Event

from .conftest import chromium, page_for, run
from .test_person_page import tab_to

pytestmark = pytest.mark.browser

# Where the crosshair's centre is, in the picture's natural pixels; null while it is hidden.
CROSSHAIR_AT = """() => {
  const cursor = document.querySelector('#stage .overlay .kbd-cursor');
  if (!cursor || cursor.hidden || !cursor.checkVisibility()) return null;
  const c = cursor.getBoundingClientRect(), o = cursor.parentElement.getBoundingClientRect();
  const box = JSON.parse(document.getElementById('page-data').textContent).layout.image;
  return {
    x: ((c.x + c.width / 2 - o.x) / o.width) * box.natural_w,
    y: ((c.y + c.height / 2 - o.y) / o.height) * box.natural_h,
  };
}"""


def test_tab_shows_the_crosshair_and_enter_clicks_where_it_shows(site, puzzles_of, annotator):
    [puzzle] = puzzles_of("Misleading_Click")
    user, _ = annotator()

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle)
            await tab_to(page, "#stage .overlay")
            on_focus = await page.evaluate(CROSSHAIR_AT)
            await page.keyboard.press("Shift+ArrowRight")
            await page.keyboard.press("ArrowDown")
            moved = await page.evaluate(CROSSHAIR_AT)
            await page.keyboard.press("Enter")
            await wait_submitted(page, 15)
            await page.context.close()
            return attempt, on_focus, moved

    attempt, on_focus, moved = run(scenario())
    assert on_focus is not None, "the picture had the focus and no crosshair showed"
    assert moved is not None and moved["x"] > on_focus["x"] and moved["y"] > on_focus["y"]
    click = Event.objects.get(attempt=attempt, kind="act.click").data
    assert click["x"] == pytest.approx(moved["x"], abs=1) and click["y"] == pytest.approx(moved["y"], abs=1)
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.submitted_at and scored.input_ok, scored.input_problem
