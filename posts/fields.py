from typing import Any

from django.core.validators import RegexValidator
from django.db import models

from posts import ids


class KeyField(models.CharField):
    """A post id or timeline key: 16 characters compared byte by byte.

    On PostgreSQL the column is char(16) with the "C" collation so that index order is
    byte order (a locale collation would sort case and punctuation its own
    way). SQLite compares with BINARY already. The collation is chosen per
    connection, so migrations stay the same for both databases.
    """

    default_validators = [RegexValidator(r"^[0-9A-Z]{16}\Z", "Not a well-formed key.")]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["max_length"] = ids.KEY_LENGTH
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("max_length", None)
        return name, path, args, kwargs

    def db_type(self, connection: Any) -> str | None:
        if connection.vendor == "postgresql":
            # Fixed width, and not varchar: Django adds a second, useless
            # varchar_pattern_ops index to indexed varchar columns.
            return ids.SQL_TYPE
        return super().db_type(connection)

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        # Having this hook keeps bulk_create off PostgreSQL's UNNEST path,
        # which casts to the type without its length: char(16)[] would
        # become char[], that is char(1), and cut every key to one character.
        return "%s"

    def db_parameters(self, connection: Any) -> dict[str, Any]:
        params = super().db_parameters(connection)
        if connection.vendor == "postgresql":
            params["collation"] = "C"
        return params
