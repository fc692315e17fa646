"""What the platform reports: a study's report as data (reports.py, assembled from one module per
population: people.py, agent_runs.py, training.py) with its statistics (stats.py), worded
(wording.py) and rendered as CSV, JSON, Markdown or HTML (render.py, with the charts' geometry in
charts.py and the page in templates/reporting/), raw events as JSON lines and one CSV row per
participant (exports.py), and the live dashboard (dashboard.py, consumers.py, views.py).
What each figure of a report is: docs/reports.md.

May import: annotation.models and puzzles/. Reads only: nothing here writes an attempt.
"""
