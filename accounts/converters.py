"""The ``<username:...>`` URL converter, registered by ``AccountsConfig.ready``."""


class UsernameConverter:
    """The characters a username may have (accounts.models.username_validator)."""

    regex = "[A-Za-z0-9_]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
