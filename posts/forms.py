from typing import Any

from django import forms

from posts.models import MAX_POST_LENGTH


class PostTextField(forms.CharField):
    """Post text: trimmed, with browser line ends (CRLF) counted as one character."""

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n")


class PostForm(forms.Form):
    """A new post. ``in_reply_to`` is not read yet (replies come later) and is ignored."""

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
