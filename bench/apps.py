from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Dev tools: demo worlds and benchmarks (``seed_demo``, ``bench_timelines``, ``bench_search``).

    An app only so that its management commands are found. It has no models, and
    it imports the product; no product module imports it.
    """

    name = "bench"
    label = "bench"
