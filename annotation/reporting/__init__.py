"""What the platform reports: a study's report as data (reports.py) with its statistics
(stats.py), worded (wording.py) and rendered as CSV, JSON, Markdown or HTML (render.py, with
the charts' geometry in charts.py and the page in templates/reporting/), raw events as JSON lines
(exports.py), and the live dashboard (dashboard.py, consumers.py, views.py).

May import: annotation.models and puzzles/. Reads only: nothing here writes an attempt.
"""
