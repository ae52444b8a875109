"""Read positions (Mastodon's markers): where a person stopped reading their home feed
and their notifications, kept so that another app of theirs opens at the same place.

``models`` (one row per user and timeline), ``services`` (set positions),
``selectors`` (read them).
"""
