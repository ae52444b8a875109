"""Dev tools: demo worlds and benchmarks, in one room.

``demo`` builds the world ``manage.py seed_demo`` writes; ``timelines`` and
``search`` are the benchmarks behind ``bench_timelines`` and ``bench_search``;
``bulk`` (COPY and batched writers) and ``words`` (word lists) are shared by
them. This package imports the product; no product module imports it.

Benchmarks print figures beside a baseline measured in the same run. Timed
assertions do not belong in tests (they flake on a busy machine); the commands
here report, and docs/BENCHMARKS.md records what they reported.
"""
