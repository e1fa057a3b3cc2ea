"""The package installs whole: the built wheel holds every module of the tree (not only what ``-e`` sees)."""

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setup_module():
    spec = importlib.util.spec_from_file_location("cardenvs_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree_modules() -> set[str]:
    """Installed paths (``cardenvs/...``) of every .py file under the package roots."""
    setup = _setup_module()
    paths = set()
    for name, folder in setup.PACKAGE_ROOTS.items():
        prefix = Path(*name.split("."))
        for path in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in path.parts:
                paths.add((prefix / path.relative_to(ROOT / folder)).as_posix())
    return paths


def test_every_folder_with_modules_is_a_discovered_package():
    setup = _setup_module()
    packages = set(setup.discover_packages(ROOT))
    folders = {str(Path(p).parent).replace("/", ".") for p in _tree_modules()}
    assert folders == packages, "a folder with .py files but no __init__.py would not install"
    assert "cardenvs.vector" in packages and "cardenvs.agents" in packages and "cardenvs.train" in packages


@pytest.mark.skipif(os.environ.get("CARDENVS_SKIP_WHEEL") == "1", reason="CARDENVS_SKIP_WHEEL=1")
@pytest.mark.slow
def test_built_wheel_holds_every_module_and_the_shipped_policies(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("cardenvs-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _tree_modules() - names
    assert not missing, f"modules missing from the wheel: {sorted(missing)}"
    assert {"cardenvs/agents/policies/ring_rang.npz", "cardenvs/agents/policies/rang.npz",
            "cardenvs/agents/policies/manifest.json"} <= names
    protocols = {f"cardenvs/train/protocols/{p.name}" for p in (ROOT / "train" / "protocols").glob("*.json")}
    assert protocols and protocols <= names, "the benchmark protocols and ladders ship with the package"
    assert not any(n.startswith(("agents/", "train/", "tests/")) for n in names), "generic top-level names"


@pytest.mark.skipif(os.environ.get("CARDENVS_TEST_INSTALLED") != "1", reason="only in CI's installed-wheel stage")
def test_the_package_under_test_is_the_installed_wheel():
    import cardenvs
    import cardenvs.vector

    assert "site-packages" in Path(cardenvs.__file__).parts
    assert Path(cardenvs.__file__).resolve().parent != ROOT / "cardenvs"  # not the checkout's folder
    assert cardenvs.vector.__file__


def test_import_cardenvs_stays_light():
    """The env package loads neither the agents, the trainers nor torch (gymnasium ids register by string)."""
    code = ("import sys, cardenvs, gymnasium\n"
            "heavy = sorted(m for m in sys.modules if m.startswith(('cardenvs.agents', 'cardenvs.train', 'torch',"
            " 'cardenvs.gym_envs')))\n"
            "assert not heavy, heavy\n"
            "assert 'cardenvs/RingRang-v0' in gymnasium.registry and 'cardenvs/Rang-v0' in gymnasium.registry\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
