from typing import Any

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from accounts.models import User, username_validator


class SignupForm(forms.Form):
    """A new account: the view hands the cleaned data to accounts.services.create_user."""

    username = forms.CharField(
        max_length=30,
        validators=[username_validator],
        help_text="Letters, digits and underscores, up to 30.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    display_name = forms.CharField(max_length=50, required=False, label="Display name")
    password1 = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html(),
    )
    password2 = forms.CharField(
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        # The database constraint is on lower(username): "Alice" and "alice" are one name.
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationError("That username is taken.", code="taken")
        return username

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        password1 = cleaned.get("password1")
        password2 = cleaned.get("password2")
        if password1 and password2 and password1 != password2:
            self.add_error("password2", "The two passwords do not match.")
        if password1:
            # An unsaved user lets the similarity validator compare with the username.
            candidate = User(
                username=cleaned.get("username", ""),
                display_name=cleaned.get("display_name", ""),
            )
            try:
                password_validation.validate_password(password1, user=candidate)
            except ValidationError as exc:
                self.add_error("password1", exc)
        return cleaned


class ProfileForm(forms.Form):
    display_name = forms.CharField(max_length=50, required=False, label="Display name")
    bio = forms.CharField(max_length=300, required=False, widget=forms.Textarea(attrs={"rows": 4}))


class LoginForm(AuthenticationForm):
    """Django's log-in form, refusing letters outside the username rule before ``authenticate``.

    Log-in matches usernames with ``iexact`` (PostgreSQL ``UPPER()``), which
    folds look-alikes such as U+017F (long s) into ``S`` and U+0131 (dotless
    i) into ``I``, and Django's own username field applies NFKC (full-width
    letters become ASCII). Either would let "ka" + two long s sign in as
    ``kass`` under a rate-limit key of its own. No real username has such a letter, so the
    field takes the text as typed and checks it against the sign-up rule.
    """

    username = forms.CharField(
        max_length=30,
        validators=[username_validator],
        widget=forms.TextInput(
            attrs={"autofocus": True, "autocomplete": "username", "autocapitalize": "none"}
        ),
    )
