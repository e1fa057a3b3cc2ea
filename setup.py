"""Package discovery that cannot drift from the tree.

The repo keeps ``cardenvs/``, ``agents/`` and ``train/`` at its top level; the last two install
as ``cardenvs.agents`` and ``cardenvs.train`` so the package never takes the generic names
``agents``/``train``. Every folder with an ``__init__.py`` under those roots is a package: a new
subpackage (``cardenvs/vector/`` was once missed by a hand-written list) ships without an edit
here. Everything else about the project is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup

# installed package name -> folder in the repo
PACKAGE_ROOTS = {"cardenvs": "cardenvs", "cardenvs.agents": "agents", "cardenvs.train": "train"}


def discover_packages(base: Path = Path(__file__).parent) -> list[str]:
    """Every package under the roots, by its installed name."""
    packages = []
    for name, folder in PACKAGE_ROOTS.items():
        for init in sorted((base / folder).rglob("__init__.py")):
            parts = init.parent.relative_to(base / folder).parts
            packages.append(".".join((name, *parts)))
    return packages


if __name__ == "__main__":
    setup(packages=discover_packages(), package_dir=PACKAGE_ROOTS)
