"""What a data export holds, and the zip it is written to (accounts.exports).

accounts imports no app above it, so each app registers the parts of an
archive it owns (``register``, from its ``AppConfig.ready``), as each erases
its own rows at deletion: accounts the profile, relations the follow lists,
blocks and mutes, posts the posts, their images and the likes. A
``Section`` is one table of the archive, written twice: ``<name>.json`` (an
array of objects; the exact data) and ``<name>.csv`` (a header, then one line
a row; lists joined by spaces). Files (post images) are copied from the
storage into the zip under the paths the rows name.
"""

import csv
import io
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.core.files.storage import Storage

Row = dict[str, Any]

# A table's CSV is kept in memory up to this size, then in a temporary file.
SPOOL_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Section:
    """One table of the archive: ``rows(user_id)`` in ``columns``, ``count(user_id)`` of them.

    ``files(user_id)``: (path in the archive, storage name) of the files the
    rows name; ``single``: the JSON is one object (the profile), not an array.
    """

    name: str
    columns: tuple[str, ...]
    rows: Callable[[int], Iterable[Row]]
    count: Callable[[int], int]
    files: Callable[[int], Iterable[tuple[str, str]]] | None = None
    file_count: Callable[[int], int] | None = None
    single: bool = False


_SECTIONS: dict[str, Section] = {}


def register(section: Section) -> None:
    """Add a part to every archive (an app's ``ready``); registering a name again replaces it."""
    _SECTIONS[section.name] = section


def sections() -> list[Section]:
    return list(_SECTIONS.values())


README = """\
Your data from Feed, as of {when} (UTC).

Each table is here twice: NAME.json (the exact data) and NAME.csv (for
spreadsheets; lists are separated by spaces). Times are ISO 8601, in UTC.

{tables}

following.csv can be imported back (Settings, Export, "Import follows"):
it follows everyone it lists who still has an account you may follow.
"""


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ArchiveWriter:
    """Writes sections into an open zip file, calling ``tick(n)`` as items are written."""

    def __init__(self, target: IO[bytes], storage: Storage, tick: Callable[[int], None]) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED)
        self.storage = storage
        self.tick = tick

    def close(self) -> None:
        self.zip.close()

    def readme(self, when: datetime, names: list[str]) -> None:
        tables = "\n".join(f"- {name}.json, {name}.csv" for name in names)
        text = README.format(when=when.strftime("%Y-%m-%d %H:%M"), tables=tables)
        self.zip.writestr("README.txt", text)

    def section(self, section: Section, user_id: int) -> None:
        # A zip takes one entry at a time: the JSON goes straight in, the CSV
        # waits in a temporary file (in memory while small) and follows it.
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            with self.zip.open(f"{section.name}.json", "w") as raw_json:
                self._rows(section, user_id, raw_json, spool)
            spool.seek(0)
            with self.zip.open(f"{section.name}.csv", "w") as raw_csv:
                for chunk in _chunks(spool):
                    raw_csv.write(chunk)
        if section.files is not None:
            for path, name in section.files(user_id):
                self._copy(path, name)
                self.tick(1)

    def _rows(self, section: Section, user_id: int, raw_json: IO[bytes], spool: IO[bytes]) -> None:
        as_json = io.TextIOWrapper(raw_json, encoding="utf-8", newline="")
        as_csv = io.TextIOWrapper(spool, encoding="utf-8", newline="")
        table = csv.writer(as_csv)
        table.writerow(section.columns)
        as_json.write("" if section.single else "[")
        for n, row in enumerate(section.rows(user_id)):
            values = {column: _json_value(row.get(column)) for column in section.columns}
            if not section.single:
                as_json.write(",\n" if n else "\n")
            as_json.write(json.dumps(values, ensure_ascii=False))
            table.writerow([_csv_value(row.get(column)) for column in section.columns])
            self.tick(1)
        as_json.write("\n" if section.single else "\n]\n")
        # Flushed and let go: the wrappers must not close the files beneath them.
        for wrapper in (as_json, as_csv):
            wrapper.flush()
            wrapper.detach()

    def _copy(self, path: str, name: str) -> None:
        """A stored file into the zip as it is (images are compressed already)."""
        try:
            source = self.storage.open(name, "rb")
        except FileNotFoundError:
            return  # deleted meanwhile with its post: the rows said where it would be
        with source, self.zip.open(zipfile.ZipInfo(path), "w") as target:
            for chunk in _chunks(source):
                target.write(chunk)


def _chunks(source: IO[bytes], size: int = 1024 * 1024) -> Iterator[bytes]:
    while chunk := source.read(size):
        yield chunk
