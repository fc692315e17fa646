"""Everything that acts on the live page other than a person's hand: the site served under
daphne (server.py), Chromium driven by Playwright (browser.py), replay verification of
reference answers (replay.py), and agents: runs of rollouts (runs.py), each an episode on the
page (episode.py) through a protocol (protocols/: captchaarena-native, openai-tools) with the
published action timings (actions.py) and history bounds (context.py), a model server reached
with retries (model.py), every turn kept (trajectories.py), the published output layout written
(exports.py) and read back (outputs.py), the staff's trajectory pages (views.py).

May import: annotation.models, annotation.live and puzzles/.
"""
