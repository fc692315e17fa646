"""What people (and agents) leave behind, as files researchers can use: puzzle labels for curating
the benchmark (labels.py: solve rates, consensus on wrong answers, flags, review outcomes, agent
runs, and the derived labels valid / suspect / difficulty / mining), human trajectories in the
published training layout, re-rendered by replaying the stored events on the live page
(trajectories.py, with the continuous pointer path), an optional reasoning fill by a model with a
second call as judge (reasoning.py), per-attempt motion features and a human-likeness score
(motion.py), and the staff's labels page (views.py). See docs/datasets.md.

May import: annotation.models, puzzles/, and, read-only, annotation.live (page data, attempts for
the replay), annotation.review (answer equality of the consensus audit), annotation.agents (the
browser, the page server, the published layout, the chat client) and annotation.reporting (its
statistics). Nothing here changes an attempt, a flag or a puzzle; the replay's own attempts are
deleted once rendered.
"""
