"""The signed-in user's own settings and collections that clients read at start-up:
preferences, filters, favourites, bookmarks, followed tags, lists, custom emojis,
announcements, endorsements, featured tags.
"""

from ninja import Router

router = Router(tags=["personal"])
