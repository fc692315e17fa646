"""The live page's server side: the one path every attempt takes, whoever acts.

Owns participants and attempts (attempts.py), frame validation (frames.py), the intake of
batches over the socket or HTTP (intake.py), durations from the logged events (timing.py), the
verdict on submit (scoring.py), the page's data (page.py), the socket (consumers.py) and the page
views (views.py).

May import: annotation.models and puzzles/. No other annotation domain: they all build on this.
"""
