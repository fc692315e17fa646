"""Puzzle labels and their review: flags, dismissals, retirements and truth corrections with
the audit log, the consensus audit (labels.py); the review queue and a puzzle's review page
(queue.py); the flag endpoint and the staff's pages (views.py).

May import: annotation.models, annotation.live (re-scoring, attempt lookup) and puzzles/.
"""
