"""The arena as a training environment, served over OpenEnv's wire protocol (docs/environment.md).

tokens.py    trainers' keys: made, looked up by hash, revoked in the admin
protocol.py  the wire: reset parameters and actions checked, frames and schemas as OpenEnv's are
episodes.py  the database side of an episode: its puzzle (pool, seed, group), run, rollout, reward
sessions.py  one connection's episodes in its own browser context, acting through the agents' engine
server.py    the ASGI application `env serve` runs: /<token>/ws and the HTTP endpoints

May import live/ (attempts) and agents/ (the episode engine, runs, trajectories): an environment
episode is an agent rollout, played by the same code. Nothing imports it but `manage.py env`.
"""
