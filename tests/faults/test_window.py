"""The page's send window behind a batch the server never gets (real Chromium, a live daphne)."""

import pytest

from annotation.agents.browser import perform, wait_submitted
from annotation.models import Attempt
from puzzles.registry import get_type
from tests.e2e.conftest import chromium, page_for, run
from tests.faults.harness import GENERATOR, PER_TICK, STATE

pytestmark = pytest.mark.browser

LOST = 3  # the batch that never reaches the server
# Every send of batch LOST is swallowed, resends on new sockets too: a gap the server holds for good.
DROP_ONE = f"""
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (text) {{
  if (JSON.parse(text).seq !== {LOST}) send.call(this, text);
}};
navigator.sendBeacon = () => false;
"""


def test_batches_behind_a_permanent_gap_still_go_and_the_submit_is_scored(site, puzzles_of, annotator):
    """Every batch after the gap is acknowledged at the gap's edge. The window counts answers, so
    the later batches (more than a window's worth) and the submit still leave, and the submit is
    scored by the gap rules on what arrived."""
    puzzle = puzzles_of("Object_Match")[0]
    user, _ = annotator()
    submit_x, submit_y = get_type(puzzle.type).layout(puzzle.public).control("submit").center()

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle, init_script=DROP_ONE + GENERATOR)
            await page.evaluate(f"window.__gen.start({PER_TICK})")  # a batch every 100 ms
            await page.wait_for_function(f"{STATE}.nextSeq > {LOST + 50}", timeout=30000)
            await page.evaluate("window.__gen.stop()")
            await perform(page, {"action": "click", "arguments": {"x": round(submit_x), "y": round(submit_y)}})
            await wait_submitted(page, 40)  # the gap's wait (GAP_WAIT_S) comes first
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.submitted_at is not None
    assert attempt.missing_batches == [LOST]
    assert attempt.acked_seq == LOST - 1 and attempt.max_seq > LOST + 50
