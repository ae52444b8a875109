"""How long a post is, as the compose box counts it: every link is 23 characters.

Mastodon's rule, so a long link does not eat the 500: each ``http://`` or
``https://`` URL (up to the next space) counts as ``URL_LENGTH``, whatever
its length; every other character, an emoji included, counts as one.
``static/js/compose.js`` counts the same way (the same pattern, characters
as code points), so the counter and the form agree.
"""

import re

URL_LENGTH = 23
URL = re.compile(r"https?://\S+", re.IGNORECASE)
# However the links count, the stored text has a ceiling.
MAX_RAW_LENGTH = 5000


def post_length(text: str) -> int:
    """The text's length with each URL counted as ``URL_LENGTH``."""
    return len(URL.sub("x" * URL_LENGTH, text))
