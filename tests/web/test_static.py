"""The web UI's static files: htmx vendored as published, and shipped in the package."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import charmemory.web

STATIC = Path(charmemory.web.__file__).parent / "static"
ROOT = Path(__file__).resolve().parents[2]
HTMX_SHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"  # 2.0.11


def test_htmx_is_the_published_file_noted_beside_it() -> None:
    shipped = (STATIC / "vendor" / "htmx.min.js").read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == HTMX_SHA256
    assert HTMX_SHA256 in (STATIC / "vendor" / "README.md").read_text(encoding="utf-8")
    assert "Zero-Clause BSD" in (STATIC / "vendor" / "htmx.LICENSE.txt").read_text(encoding="utf-8")


def test_templates_and_static_files_are_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["charmemory"]
    assert "web/templates/**/*" in data and "web/static/**/*" in data


def test_the_pages_load_nothing_from_elsewhere() -> None:
    templates = Path(charmemory.web.__file__).parent / "templates"
    for path in [*templates.rglob("*.html"), STATIC / "app.js", STATIC / "app.css"]:
        text = path.read_text(encoding="utf-8")
        assert "http://" not in text.replace("http://www.w3.org", "")
        assert "https://" not in text, path
