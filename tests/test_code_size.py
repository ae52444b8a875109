"""Rooms stay small enough to read: no module over 400 lines in the engine's apps, no
function over 60 lines in the product (tests, benchmarks and migrations aside)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("feed_project", "accounts", "relations", "posts", "timelines", "api")
ROOMS = ("timelines", "posts", "relations", "api")


def product_modules(packages: tuple[str, ...]) -> list[Path]:
    return [
        path
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def test_no_module_of_the_engine_is_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in product_modules(ROOMS)
        if (n := len(path.read_text().splitlines())) > 400
    }
    assert long == {}


def test_no_product_function_is_over_60_lines():
    long = []
    for path in product_modules(PRODUCT):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({lines} lines)")
    assert long == []
