"""The OAuth 2 tables, django-oauth-toolkit's models swapped in here
(``OAUTH2_PROVIDER_*_MODEL`` in the settings).

Two reasons to own them. A Mastodon app registers once (``POST /api/v1/apps``)
and then uses any grant, and asks for its scopes at registration: the
application keeps those scopes and its website, and allows the code,
password and client-credentials grants alike. And on a Citus cluster
(``feed_project.sharding``) these are reference tables, read on any node by
every API request and written at log-in, so none of their keys is a database
constraint to a distributed table (``accounts_user``): each is
``db_constraint=False``, as the project's keys across shards are, and an
erased account's rows are deleted by ``api.signal_handlers``.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.db import models
from oauth2_provider import models as oauth

# What a Mastodon app may use, whichever grant it registered with.
MASTODON_GRANTS = {
    oauth.AbstractApplication.GRANT_AUTHORIZATION_CODE,
    oauth.AbstractApplication.GRANT_PASSWORD,
    oauth.AbstractApplication.GRANT_CLIENT_CREDENTIALS,
}
OUT_OF_BAND = "urn:ietf:wg:oauth:2.0:oob"


def _user(**kwargs: object) -> models.ForeignKey:
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="%(app_label)s_%(class)s",
        db_constraint=False,
        **kwargs,
    )


def _application(**kwargs: object) -> models.ForeignKey:
    return models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        on_delete=models.CASCADE,
        db_constraint=False,
        **kwargs,
    )


class Application(oauth.AbstractApplication):
    """A client app, as ``POST /api/v1/apps`` registers it."""

    user = _user(null=True, blank=True)
    # The scopes it registered with (space-separated): the most a token of it may have.
    scopes = models.TextField(default="read")
    website = models.CharField(max_length=2000, blank=True, default="")

    class Meta(oauth.AbstractApplication.Meta):
        swappable = "OAUTH2_PROVIDER_APPLICATION_MODEL"

    def allows_grant_type(self, *grant_types: str) -> bool:
        return any(grant in MASTODON_GRANTS for grant in grant_types)

    def get_allowed_schemes(self) -> list[str]:
        """The schemes of its own redirect URIs: apps come back by theirs (``elk://``,
        ``com.example.app:/``), checked at registration (``api.apps_endpoint``)."""
        schemes = {urlsplit(uri).scheme for uri in self.redirect_uris.split()}
        return sorted(schemes - {"urn"})


class Grant(oauth.AbstractGrant):
    user = _user()
    application = _application()

    class Meta(oauth.AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class AccessToken(oauth.AbstractAccessToken):
    user = _user(null=True, blank=True)
    source_refresh_token = models.OneToOneField(
        settings.OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL,
        on_delete=models.SET_NULL,
        blank=True,
        null=True,
        related_name="refreshed_access_token",
        db_constraint=False,
    )
    id_token = models.OneToOneField(
        settings.OAUTH2_PROVIDER_ID_TOKEN_MODEL,
        on_delete=models.CASCADE,
        blank=True,
        null=True,
        related_name="access_token",
        db_constraint=False,
    )
    application = _application(blank=True, null=True)

    class Meta(oauth.AbstractAccessToken.Meta):
        swappable = "OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL"


class RefreshToken(oauth.AbstractRefreshToken):
    user = _user()
    application = _application()
    access_token = models.OneToOneField(
        settings.OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL,
        on_delete=models.SET_NULL,
        blank=True,
        null=True,
        related_name="refresh_token",
        db_constraint=False,
    )

    class Meta(oauth.AbstractRefreshToken.Meta):
        swappable = "OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL"


class IDToken(oauth.AbstractIDToken):
    user = _user(null=True, blank=True)
    application = _application(blank=True, null=True)

    class Meta(oauth.AbstractIDToken.Meta):
        swappable = "OAUTH2_PROVIDER_ID_TOKEN_MODEL"


class DeviceGrant(oauth.AbstractDeviceGrant):
    user = _user(null=True, blank=True)

    class Meta(oauth.AbstractDeviceGrant.Meta):
        swappable = "OAUTH2_PROVIDER_DEVICE_GRANT_MODEL"
