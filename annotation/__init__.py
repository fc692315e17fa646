"""The annotation side: people, agents and the replay acting on puzzles, and what comes of it.

One sub-package a domain; each says in its docstring what it owns and what it may import:

    live/       the page's server side: attempts, frames, intake, timing, scoring, the page data
    studies/    studies, enrolment and queues, crowd access, quality control
    review/     flags, the review queue, truth corrections, the consensus audit
    reporting/  reports, statistics, rendering, exports, the live dashboard
    agents/     what acts on the live page in Chromium besides people: replay, agent runs and their
                protocols, trajectories, the published client's output layout

models.py holds every model (one migration history); urls.py and routing.py wire the views and
consumers. The import rules (tests/test_architecture.py checks them):
- puzzles/ never imports annotation/;
- live/ imports no other domain: every other domain builds on it;
- no domain imports another domain's views or consumers.
"""
