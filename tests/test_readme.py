"""The README's first screen works as written: every Python block runs, its commands exist, its links resolve."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_python_block_runs(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_shipped_agent_example_plays_and_prints_its_own_hand():
    (code,) = [block for block in BLOCKS if "make_agent" in block]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT).stdout
    assert "RING RANG round" in out


def test_quick_start_commands_and_links_exist():
    quick = README[README.index("## Quick start"):README.index("## Install")]
    for script in re.findall(r"bash (\S+\.sh|\.ci/run)", quick):
        assert (ROOT / script).is_file(), script
    for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)", README):
        assert (ROOT / target).is_file(), target
    assert len(README.split("## Install")[0].splitlines()) < 80  # the first screen stays a first screen


def test_the_dependency_list_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.split(r"[<>=!~ ;\[]", d)[0] for d in deps]
    line = next(line for line in README.splitlines() if line.startswith("pip install .  "))
    assert all(name in line for name in names), (names, line)
