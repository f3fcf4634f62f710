"""Benchmarks: each `bench_*.py` module here has a `main()`; `python -m benchmarks` runs them."""
