"""Moderation, in one room: reports, hiding posts, suspending users, the log.

- ``services``: every moderation write (report, hide and restore a post,
  suspend and unsuspend a user, resolve a report), each logged.
- ``views``: the report buttons, ``/posts/<id>/report/`` and ``/@<username>/report/``.
- ``urls``: those two routes (included by ``posts.urls``, at the site root).
- ``admin``: the report queue, the log, and every moderation action of the
  admin (hide and restore posts, suspend and unsuspend users), for staff with
  the ``posts.moderate`` permission.

The ``Report`` and ``ModerationLog`` models are the posts app's, in
``posts/models.py``: their tables and migrations stay where they are.
"""
