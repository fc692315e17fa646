"""Jobs: heavy work (replay-verification, generation, trajectory export) split into chunks that
Celery workers on any machine run, with progress, failures and cancelling kept in the database.

The engine is here, beside the bank, because the bank's own `puzzles generate` uses it and the bank
never imports annotation; annotation's jobs (replay, trajectories) bring their own chunk work.
Its models are a Django app of their own (label "jobs"), so they migrate apart from both sides.
docs/jobs.md describes the whole."""
