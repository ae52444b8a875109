"""Every management command of the project explains itself: ``--help`` renders."""

import pytest
from django.core.management import get_commands, load_command_class

OURS = sorted(
    (name, app)
    for name, app in get_commands().items()
    if app.split(".")[0] in {"accounts", "posts", "relations", "timelines", "bench"}
)


def test_the_project_has_its_commands():
    names = {name for name, _ in OURS}
    assert {"bench_timelines", "bench_http", "rebuild_timelines", "doctor"} <= names


@pytest.mark.parametrize(("name", "app"), OURS, ids=[name for name, _ in OURS])
def test_help_renders(name, app):
    command = load_command_class(app, name)
    text = command.create_parser("manage.py", name).format_help()
    assert f"manage.py {name}" in text and command.help.split()[0] in text
