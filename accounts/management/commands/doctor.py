"""Check the services the site needs (feed_project.health): PostgreSQL, Redis, the broker."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from feed_project.health import configured_checks, run_checks

ALL_SERVICES = ("database", "redis", "broker")


class Command(BaseCommand):
    help = (
        "Check the database, the Redis cache and the Celery broker, printing each one's "
        "latency; exit 1 when one fails."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        results = run_checks()
        configured = configured_checks()
        for name in ALL_SERVICES:
            if name not in configured:
                self.stdout.write(f"{name:<9} not configured, not checked")
        for result in results:
            latency = f"{result.seconds * 1000:7.1f} ms"
            if result.ok:
                self.stdout.write(f"{result.name:<9} ok      {latency}")
            else:
                self.stdout.write(f"{result.name:<9} FAILED  {latency}  {result.error}")
        failed = [result.name for result in results if not result.ok]
        if failed:
            raise CommandError(f"failed: {', '.join(failed)}", returncode=1)
        self.stdout.write("All configured services answer.")
