"""The layer rules of docs/architecture.md, checked on every import statement."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "charmemory"

# What each pure layer must never import (prefix match on module names).
FORBIDDEN = {
    "formats": (
        "charmemory.adapters",
        "charmemory.services",
        "charmemory.cli",
        "charmemory.api",
        "charmemory.core",
        "httpx",
        "sqlite3",
        "filelock",
        "onnxruntime",
        "subprocess",
        "socket",
    ),
    "core": (
        "charmemory.adapters",
        "charmemory.services",
        "charmemory.cli",
        "charmemory.api",
        "httpx",
        "sqlite3",
        "filelock",
        "onnxruntime",
        "subprocess",
        "socket",
    ),
    "adapters": (
        "charmemory.services",
        "charmemory.cli",
        "charmemory.api",
        "charmemory.composition",
    ),
    "services": (
        "charmemory.adapters",
        "charmemory.cli",
        "charmemory.api",
        "charmemory.composition",
    ),
    # The shells reach adapters only through composition.
    "cli": ("charmemory.adapters",),
    # The web UI is a shell beside the API: services through composition's App.
    "web": ("charmemory.adapters", "charmemory.cli"),
    "ports": (
        "charmemory.adapters",
        "charmemory.services",
        "charmemory.cli",
        "charmemory.api",
        "charmemory.composition",
    ),
}


def imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def modules_of(layer: str) -> list[Path]:
    path = PACKAGE / layer
    return [path] if path.is_file() else sorted(path.rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_point_inward(layer: str) -> None:
    offences = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules_of(layer)
        for name in imported_modules(path)
        if name.startswith(FORBIDDEN[layer])
    ]
    assert modules_of(layer) and offences == []


def test_only_composition_builds_adapters_outside_their_layer() -> None:
    """Every module that imports an adapter is an adapter, or the composition module."""
    importers = {
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if any(name.startswith("charmemory.adapters") for name in imported_modules(path))
    }
    assert {name for name in importers if not name.startswith("adapters/")} == {"composition.py"}


def test_pure_layers_do_no_file_io() -> None:
    offences = []
    for layer in ("formats", "core"):
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for call in ("open(", ".read_text(", ".write_text(", ".read_bytes(", ".write_bytes("):
                if call in text:
                    offences.append(f"{path.relative_to(PACKAGE)} calls {call}")
    assert offences == []
