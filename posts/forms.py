from typing import Any

from django import forms

from posts.models import MAX_POST_LENGTH


class PostTextField(forms.CharField):
    """Post text: trimmed, with browser line ends (CRLF) counted as one character."""

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n")


class PostForm(forms.Form):
    """A new post; a reply when ``in_reply_to`` names a post (the view checks that it may)."""

    text = PostTextField(
        max_length=MAX_POST_LENGTH,
        label="What's happening?",
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "required": "Write something first.",
            "max_length": "A post is at most %(limit_value)d characters (this one has "
            "%(show_value)d).",
        },
    )
    # The id of the post replied to; blank for a post of its own. Any other
    # text is a post that does not exist: the view answers 404.
    in_reply_to = forms.CharField(required=False, max_length=100, widget=forms.HiddenInput)
    # The id of the post quoted (posts/quotes.py); the view checks the reader may see it.
    quote_of = forms.CharField(required=False, max_length=100, widget=forms.HiddenInput)


class QuoteForm(forms.Form):
    """``/posts/<id>/repost/``: blank text reposts, text makes a quote post."""

    text = PostTextField(
        required=False,
        max_length=MAX_POST_LENGTH,
        label="Add a comment",
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages=PostForm.base_fields["text"].error_messages,
    )


class EditForm(forms.Form):
    """``/posts/<id>/edit/``: the fields of posts.edits.EDITABLE_FIELDS (``spoiler_text``
    and alt texts join them where those exist)."""

    text = PostTextField(
        max_length=MAX_POST_LENGTH,
        label="Text",
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages=PostForm.base_fields["text"].error_messages,
    )
