"""The documentation site (mkdocs.yml, issue 44 item 9): every page is in the nav, the home page's example runs,
the README's links into docs/ land on real anchors, and (where mkdocs is installed: the [docs] extra, as .ci/run
installs it) ``mkdocs build --strict`` passes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml names a Python function (!!python/object/apply:...); these tests only read the nav."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def _nav_pages(nav) -> list[str]:
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading, as mkdocs.yml's slugify (pymdownx.slugs, case=lower) makes it."""
    text = re.sub(r"</?[^>]*>", "", unicodedata.normalize("NFC", heading)).strip().lower()
    text = text.replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M)}


def test_every_page_is_in_the_nav_once():
    pages = _nav_pages(_config()["nav"])
    assert len(pages) == len(set(pages)), "a page is in the nav twice"
    assert sorted(pages) == sorted(p.name for p in DOCS.glob("*.md"))
    assert pages[0] == "index.md"


def test_the_home_page_python_block_runs():
    (code,) = re.findall(r"```python\n(.*?)```", (DOCS / "index.md").read_text(encoding="utf-8"), re.S)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_readme_links_into_docs_land_on_anchors():
    """The site checks the docs' own links; the README is not a page of it, so its anchors are checked here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(docs/([\w./-]+\.md)#([^)\s]+)\)", readme)
    assert links
    for page, anchor in links:
        assert anchor in _anchors(DOCS / page), f"README links to docs/{page}#{anchor}, which has no such heading"


def test_mkdocs_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    assert mkdocs
    result = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
