"""Notifications, a feed system of their own (seed 002): who followed, replied, liked,
reposted or mentioned you.

``models`` (the Notification row), ``services`` (notify, mark read),
``selectors`` (the notifications page), ``tasks`` and ``signals`` (written off
the request path, after the action commits), ``views``.
"""
