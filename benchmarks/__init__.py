"""Benchmarks: the synthetic generator, the tools compared, and `make bench` (run.py)."""
