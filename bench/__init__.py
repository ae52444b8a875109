"""Benchmarks: they print figures beside a baseline measured in the same run.

Timed assertions do not belong in tests (they flake on a busy machine); the
commands here report, and docs/BENCHMARKS.md records what they reported.
"""
