"""Hosted benchmarks: another project's CAPTCHA server, measured through ours (docs/hosted.md).

dialects.py  the Flask CAPTCHA app's protocol and what differs per server, as data
client.py    the peer's API server-side: list families, fetch by address, check an answer
truth.py     which routes never reach a page, and the truth fields taken out of every body
probe.py     a puzzle checked with the peer's own truth (stateful: fetched afresh; multi-step)
registry.py  benchmarks added and probed family by family, and puzzles drawn as a dataset

May import live/ (the proxy of the next slice plays its pages through the same pipeline); for
now it needs only annotation.models and puzzles/. Nothing imports it but `manage.py benchmarks`.
"""
