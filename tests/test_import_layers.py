"""Imports run one way: a module imports only its own app and the layers below it.

Low to high: feed_project's helpers (pagination, http, ratelimits, admin),
accounts, relations, posts, timelines, then the dev tools in bench. The
project's wiring (feed_project's settings, urls, celery, wsgi, asgi) may
import any app of the product, never bench.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("feed_project", "accounts", "relations", "posts", "timelines", "bench")
WIRING = {f"feed_project.{name}" for name in ("settings", "urls", "celery", "wsgi", "asgi")}
# Imports against the layers that are known and being moved; none may be added.
ALLOWED: set[tuple[str, str]] = set()


def imported_modules(path: Path) -> set[str]:
    """Every absolute module that an ``import`` or ``from ... import`` in ``path`` names."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int | None:
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def upward_imports(package: str) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        importer = module_name(path)
        highest = LAYERS.index("timelines") if importer in WIRING else layer_of(importer)
        for module in imported_modules(path):
            layer = layer_of(module)
            if layer is not None and layer > highest and (importer, module) not in ALLOWED:
                found.append(f"{importer} imports {module}")
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_no_module_imports_a_layer_above_its_own(package):
    assert upward_imports(package) == []


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from bench.demo import build_world\n")
    assert "bench.demo" in imported_modules(module)
