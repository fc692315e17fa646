"""Everything that acts on the live page other than a person's hand: the site served under
daphne (server.py), Chromium driven by Playwright (browser.py), replay verification of
reference answers (replay.py), the agent harness (harness.py), and imported runs of the
published agent (outputs.py).

May import: annotation.models, annotation.live and puzzles/.
"""
