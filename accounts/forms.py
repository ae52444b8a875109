from typing import Any
from zoneinfo import available_timezones

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from accounts import avatar_upload, registration, twofactor, unique_names
from accounts.addresses import normalize
from accounts.models import Invite, User, username_validator
from feed_project.images import Refused

INVITE_INVALID = "This invite link has expired, been used up, or is not a real invite."


def _normalized_email(address: str) -> str:
    """The address as stored: its domain lower-cased, which may lengthen it ("İ")."""
    address = normalize(address)
    if len(address) > 254:
        raise ValidationError("That address is too long.", code="max_length")
    return address


def _email_field(label: str = "E-mail") -> forms.EmailField:
    return forms.EmailField(
        label=label,
        max_length=254,
        help_text="Never shown to anyone. We send a link to confirm it.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


class SignupForm(forms.Form):
    """A new account: the view hands the cleaned data to accounts.registration.register.

    Which fields it has depends on the registration mode: ``reason`` when a
    moderator approves accounts, ``invite`` (the token of the link) when an
    invite is needed. Whether the e-mail is in use is never said here
    (accounts.addresses).
    """

    username = forms.CharField(
        max_length=30,
        validators=[username_validator],
        help_text="Letters, digits and underscores, up to 30.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    display_name = forms.CharField(max_length=50, required=False, label="Display name")
    email = _email_field()
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
    reason = forms.CharField(
        label="Why do you want to join?",
        max_length=1000,
        help_text="A moderator reads this before approving your account.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    invite = forms.CharField(max_length=80, required=False, widget=forms.HiddenInput)
    # Filled in from the browser by static/js/site.js; empty without it.
    time_zone = forms.CharField(
        max_length=64, required=False, widget=forms.HiddenInput(attrs={"data-from-browser": ""})
    )

    def clean_time_zone(self) -> str:
        """The browser's zone when it is one we know, else "" (the site's): never an error."""
        zone = self.cleaned_data.get("time_zone", "")
        return zone if zone in available_timezones() else ""

    def __init__(self, *args: Any, mode: str = "open", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if mode != "approval":
            del self.fields["reason"]
        if mode != "invite":
            del self.fields["invite"]
        self.invite: Invite | None = None

    def clean_email(self) -> str:
        return _normalized_email(self.cleaned_data["email"])

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        # "Alice" and "alice" are one name (accounts.unique_names holds it on every database).
        if unique_names.username_taken(username):
            raise ValidationError("That username is taken.", code="taken")
        return username

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "invite" in self.fields:
            # A hidden field's error would not show: it is the form's.
            self.invite = registration.usable_invite(cleaned.get("invite", ""))
            if self.invite is None:
                self.add_error(None, ValidationError(INVITE_INVALID, code="invite"))
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


def _time_zones() -> list[tuple[str, str]]:
    return [("", "The site's time zone"), *((zone, zone) for zone in sorted(available_timezones()))]


def time_zone_field(**kwargs: object) -> forms.ChoiceField:
    """An IANA time zone ("Europe/Paris"), or "" for the site's."""
    return forms.ChoiceField(choices=_time_zones, required=False, **kwargs)


class ProfileForm(forms.Form):
    display_name = forms.CharField(max_length=50, required=False, label="Display name")
    bio = forms.CharField(max_length=300, required=False, widget=forms.Textarea(attrs={"rows": 4}))
    locked = forms.BooleanField(
        required=False,
        label="Lock my account: I approve who follows me (unlocking accepts every request)",
    )
    avatar = forms.FileField(
        required=False,
        label="Picture (JPEG, PNG, WebP or GIF, up to 10 MB; shown as a square)",
        widget=forms.ClearableFileInput(
            attrs={"accept": "image/jpeg,image/png,image/webp,image/gif"}
        ),
    )
    remove_avatar = forms.BooleanField(required=False, label="Use the generated picture instead")
    time_zone = time_zone_field(label="Time zone")

    def clean_avatar(self) -> bytes | None:
        """The picture as it will be stored (accounts.avatar_upload), or None."""
        upload = self.cleaned_data.get("avatar")
        if not upload:
            return None
        try:
            return avatar_upload.prepare(upload)
        except Refused as refused:
            raise forms.ValidationError(str(refused)) from refused


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


class EmailChangeForm(forms.Form):
    """A new address for the account, with the password to say it is really its owner."""

    email = _email_field("New e-mail")
    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_email(self) -> str:
        return _normalized_email(self.cleaned_data["email"])

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise ValidationError("That is not your password.", code="password")
        return password


class CodeForm(forms.Form):
    """The log-in's second step: a code from the authenticator app, or a recovery code."""

    code = forms.CharField(
        max_length=64,
        label="Code",
        help_text="The six digits your authenticator app shows, or one of your recovery codes.",
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "autofocus": True, "autocapitalize": "none"}
        ),
    )


class ConfirmTwoFactorForm(forms.Form):
    code = forms.CharField(
        max_length=16,
        label="Code from the app",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class PasswordAgainForm(forms.Form):
    """The password asked again before a change that weakens or resets a safeguard."""

    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise ValidationError("That is not your password.", code="password")
        return password


class InviteForm(forms.Form):
    days = forms.IntegerField(
        min_value=1, max_value=registration.INVITE_MAX_DAYS, initial=7, label="Good for (days)"
    )
    max_uses = forms.IntegerField(
        min_value=1, max_value=registration.INVITE_MAX_USES, initial=1, label="Sign-ups"
    )


class DeleteAccountForm(PasswordAgainForm):
    """The password, and with two-factor on a code, before scheduling the account's erasure."""

    code = forms.CharField(
        max_length=64,
        required=False,
        label="Two-factor code",
        help_text="With two-factor on: the six digits of your app, or a recovery code.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "none"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # The code only once the password is right: a wrong password spends no code.
        asked = "password" in data and twofactor.is_enabled(self.user)
        if asked and not twofactor.check_code(user=self.user, code=data.get("code", "")):
            self.add_error("code", "That code is not right, or was used already.")
        return data
