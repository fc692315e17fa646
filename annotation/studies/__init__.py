"""Human-baseline studies: a study's settings, declared once (study_settings.py), set-up
(setup.py), each annotator's queue (queue.py), who may resume as whom (access.py), quality
control (quality.py), the annotator's pages (views.py) and the staff's pages (staff_views.py).

May import: annotation.models, annotation.live, annotation.reporting (render formats) and
puzzles/; never another domain's views or consumers.
"""
