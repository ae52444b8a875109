"""Muted words: a reader's list of words or phrases kept out of what they read.

A phrase matches as a whole word (``hell`` does not mute "hello"), case aside;
a phrase with CJK characters, written without spaces between words, matches
anywhere (``世界`` mutes "你好世界"). Each is kept with its ``pattern``, a
regular expression PostgreSQL's ``~*``, SQLite's ``REGEXP`` (Python ``re``) and
Python read alike, which ``relations.visibility`` applies at read time in every
dialect, so a new word takes effect at once, inbox and cache included.
"""

import re
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import User
from feed_project.refusals import Invalid
from relations.models import MutedWord

MAX_WORDS = 100
MAX_PHRASE_LENGTH = 100
# CJK scripts (kana, ideographs, hangul, full-width forms): no spaces between words.
_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def normalize(phrase: str) -> str:
    """The phrase as kept: trimmed, runs of white space as one space, lower case."""
    return " ".join(phrase.split()).lower()


def _escaped(phrase: str) -> str:
    # A backslash before an ASCII character that is not a letter or digit makes it
    # itself in both engines (and a space, which re.escape would leave alone in
    # neither mode we use); everything else stands for itself.
    return "".join(
        "\\" + char if char.isascii() and not char.isalnum() else char for char in phrase
    )


def whole_word(phrase: str) -> bool:
    """Whether a phrase matches only as a whole word: all but CJK ones."""
    return not _CJK.search(phrase)


def pattern_of(phrase: str) -> str:
    """The regular expression of a (normalized) phrase: a whole word, or a CJK substring."""
    escaped = _escaped(phrase)
    if not whole_word(phrase):
        return escaped
    return rf"(^|\W){escaped}(\W|$)"


def matches(pattern: str, text: str) -> bool:
    """The Python dialect of the match: ``text ~* pattern``."""
    return re.search(pattern, text, re.IGNORECASE) is not None


def live(now=None) -> Q:
    """Muted words not expired."""
    now = now or timezone.now()
    return Q(expires_at__isnull=True) | Q(expires_at__gt=now)


def words_of(user: User) -> QuerySet[MutedWord]:
    """The user's muted words in force, newest first: one range of their rows."""
    return MutedWord.objects.filter(live(), user_id=user.pk).order_by("-created_at", "-id")


class TooManyWords(Invalid, ValueError):
    """A reader mutes at most MAX_WORDS words: each is one more pattern their feed
    is matched against."""


def mute_word(*, user: User, phrase: str, expires_in_days: int | None = None) -> MutedWord:
    """Mute ``phrase`` (normalized) for ``user``; muting it again renews its expiry."""
    phrase = normalize(phrase)
    now = timezone.now()
    expires_at = now + timedelta(days=expires_in_days) if expires_in_days else None
    with transaction.atomic():
        existing = MutedWord.objects.filter(user_id=user.pk, phrase=phrase).first()
        if existing is not None:
            existing.expires_at, existing.created_at = expires_at, now
            existing.save(update_fields=["expires_at", "created_at"])
            return existing
        if MutedWord.objects.filter(user_id=user.pk).count() >= MAX_WORDS:
            raise TooManyWords(f"At most {MAX_WORDS} muted words.")
        try:
            with transaction.atomic():
                return MutedWord.objects.create(
                    user_id=user.pk,
                    phrase=phrase,
                    pattern=pattern_of(phrase),
                    created_at=now,
                    expires_at=expires_at,
                )
        except IntegrityError:  # the same phrase muted at once twice
            return MutedWord.objects.get(user_id=user.pk, phrase=phrase)


def unmute_word(*, user: User, word_id: int) -> bool:
    """Take one of ``user``'s muted words back; False when it is not theirs."""
    deleted, _ = MutedWord.objects.filter(user_id=user.pk, pk=word_id).delete()
    return bool(deleted)
