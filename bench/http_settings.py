"""The site's settings with the bench URLconf: what ``bench_http``'s gunicorn serves.

Everything else (middleware, templates, database, cache) is the product's, so
the bare page and the site's pages run under the same server settings.
"""

from feed_project.settings import *  # noqa: F403

ROOT_URLCONF = "bench.http_urls"
