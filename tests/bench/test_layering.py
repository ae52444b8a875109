"""Dev tools import the product; no product module imports them."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("feed_project", "accounts", "relations", "posts", "timelines")


def imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` in ``path`` names, at any depth."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_no_product_module_imports_the_dev_tools():
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in imported_modules(path)
        if module == "bench" or module.startswith("bench.")
    ]
    assert offenders == []


def test_the_layering_test_sees_an_import_of_the_dev_tools(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from bench.demo import build_world\n")
    assert "bench.demo" in imported_modules(module)
