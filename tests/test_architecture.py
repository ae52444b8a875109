"""The direction of imports docs/ARCHITECTURE.md draws: import-linter's contracts
(pyproject.toml) hold on the code, and the document's table says what they say."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]


def test_the_code_keeps_every_import_contract():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken." in result.stdout


def test_the_architecture_document_names_each_contract_and_its_modules():
    rows = {
        match.group(1): match.group(2)
        for match in re.finditer(
            r'^\| "([^"]+?)(?:"|\s\()[^|]*\| (.*) \|$',
            (ROOT / "docs" / "ARCHITECTURE.md").read_text(),
            re.MULTILINE,
        )
    }
    for contract in contracts():
        row = next((rule for name, rule in rows.items() if contract["name"].startswith(name)), None)
        assert row is not None, f"docs/ARCHITECTURE.md has no row for {contract['name']!r}"
        for module in contract.get("source_modules", []):
            short = module.removeprefix("feed_project")
            assert f"`{module}`" in row or f"`{short}`" in row, (contract["name"], module)
        layers = [row.find(f"`{layer}`") for layer in contract.get("layers", [])]
        assert -1 not in layers and layers == sorted(layers), (contract["name"], row)


def test_every_path_the_room_table_names_exists():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    table = text[text.index("| capability | room |") :].split("\n\n", 1)[0]
    paths = [
        path
        for row in table.splitlines()[2:]
        for path in re.findall(r"`([^`\s]+/[^`\s]*)`", row.rsplit("|", 2)[1])
    ]
    assert len(paths) > 40
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert missing == []
