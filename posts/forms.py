from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from posts import media as post_media
from posts.models import MAX_ALT_TEXT_LENGTH, MAX_POST_LENGTH, MAX_SPOILER_LENGTH, Visibility
from posts.post_length import MAX_RAW_LENGTH, URL_LENGTH, post_length


class PostTextField(forms.CharField):
    """Post text: trimmed, with browser line ends (CRLF) counted as one character,
    at most MAX_POST_LENGTH long with every link counted as URL_LENGTH (posts.post_length)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Read by static/js/compose.js, the live counter.
        self.widget.attrs["data-max-length"] = str(MAX_POST_LENGTH)
        self.widget.attrs["data-url-length"] = str(URL_LENGTH)

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def validate(self, value: str) -> None:
        super().validate(value)
        if len(value) > MAX_RAW_LENGTH:
            raise ValidationError(
                f"A post is at most {MAX_RAW_LENGTH:,} characters long, links and all.",
                code="too_long",
            )
        length = post_length(value)
        if length > MAX_POST_LENGTH:
            raise ValidationError(
                self.error_messages["max_length"],
                code="max_length",
                params={"limit_value": MAX_POST_LENGTH, "show_value": length},
            )


IMAGE_TYPES = post_media.FORMATS.values()


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class PostForm(forms.Form):
    """A new post; a reply when ``in_reply_to`` names a post (the view checks that it may)."""

    text = PostTextField(
        required=False,  # a post of images alone is fine: clean() asks for one or the other
        label="What's happening?",
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "max_length": "A post is at most %(limit_value)d characters (this one has "
            "%(show_value)d; a link counts as 23).",
        },
    )
    # The id of the post replied to; blank for a post of its own. Any other
    # text is a post that does not exist: the view answers 404.
    in_reply_to = forms.CharField(required=False, max_length=100, widget=forms.HiddenInput)
    # A content warning: the post's text and images are shown behind it.
    spoiler_text = forms.CharField(
        required=False,
        max_length=MAX_SPOILER_LENGTH,
        label="Content warning (optional)",
        error_messages={
            "max_length": "A content warning is at most %(limit_value)d characters (this one "
            "has %(show_value)d)."
        },
    )
    # Who may see it (posts.visibility); left out, public. A reply takes its
    # parent's level when that is stricter (posts.services.create_post).
    visibility = forms.ChoiceField(
        required=False,
        # Short labels: the select sits in the compose box's one row of options.
        choices=[(value, label.split(" (")[0]) for value, label in Visibility.choices],
        initial=Visibility.PUBLIC,
        label="Who can see it",
    )
    # Up to 4 files, and as many descriptions in ``media_alt`` (same order),
    # read and checked together in clean(). The field's name hides Django's
    # Form.media (widget assets, unused here) in templates, which look up
    # form["media"] first; Python code reads form["media"].
    media = forms.Field(
        required=False,
        label="Images (up to 4: JPEG, PNG, WebP or GIF, 10 MB each)",
        widget=MultipleFileInput(attrs={"accept": ",".join(t for t, _ in IMAGE_TYPES)}),
    )

    def __init__(self, *args: Any, uploads: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.uploads = uploads  # images uploaded before, named by id (posts.uploads)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        files = self.files.getlist("media") if self.files else []
        alts = self.data.getlist("media_alt") if hasattr(self.data, "getlist") else []
        try:
            cleaned["media"] = post_media.prepare_all(files, alts)
        except post_media.Refused as refused:
            cleaned["media"] = []
            self.add_error("media", str(refused))
            return cleaned
        cleaned["visibility"] = cleaned.get("visibility") or Visibility.PUBLIC
        images = len(cleaned["media"]) + self.uploads
        if not cleaned.get("text") and not images and "text" not in self.errors:
            self.add_error("text", "Write something first, or add an image.")
        return cleaned

    def alt_texts(self) -> list[str]:
        """The descriptions to show again in the four alt fields (files are not kept)."""
        sent = self.data.getlist("media_alt") if hasattr(self.data, "getlist") else []
        return [*sent[: post_media.MAX_IMAGES], *[""] * (post_media.MAX_IMAGES - len(sent))]

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
    """``/posts/<id>/edit/``: the fields of posts.edits.EDITABLE_FIELDS, and the
    descriptions of the post's images (``media_alt``, one per image, in order)."""

    text = PostTextField(
        max_length=MAX_POST_LENGTH,
        label="Text",
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages=PostForm.base_fields["text"].error_messages,
    )
    spoiler_text = forms.CharField(
        required=False,
        max_length=MAX_SPOILER_LENGTH,
        label="Content warning (optional)",
        error_messages=PostForm.base_fields["spoiler_text"].error_messages,
    )

    def __init__(self, *args: Any, images: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.images = images

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        sent = self.data.getlist("media_alt") if hasattr(self.data, "getlist") else []
        if len(sent) > self.images:
            self.add_error(None, f"This post has {self.images} image(s): one description each.")
        for n, alt in enumerate(sent, 1):
            if len(alt) > MAX_ALT_TEXT_LENGTH:
                self.add_error(
                    None,
                    f"Description {n} is {len(alt):,} characters: at most {MAX_ALT_TEXT_LENGTH:,}.",
                )
        cleaned["alt_texts"] = sent if self.is_bound and "media_alt" in self.data else None
        return cleaned
