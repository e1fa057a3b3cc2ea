"""An outside agent's factory that raises is one line naming the spec, the error and where (issue 42 item 13)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cardenvs.agents import outside
from cardenvs.agents.registry import make_agent
from cardenvs.train.evaluate import evaluate_agents

FACTORIES = textwrap.dedent('''
    import numpy as np

    def make_broken(seed=None, **params):
        raise RuntimeError("no weights in\\n  ./weights.bin")

    def make_picky(depth=1):
        if depth < 1:
            raise ValueError("depth must be >= 1")
        return lambda observation: int(np.flatnonzero(observation["action_mask"])[0])

    class Crashing:
        def __init__(self, seed=None):
            {}["model"]

        def act(self, observation):
            return 0

    def make_buggy(seed=None):
        return len(None)  # a TypeError inside the factory, not a bad parameter
''')


@pytest.fixture
def factories(tmp_path, monkeypatch):
    """A module ``badbots`` of factories, importable, and an installed package publishing one as ``brokenbot``."""
    (tmp_path / "badbots.py").write_text(FACTORIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    dist = tmp_path / "badbots_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: badbots-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[cardenvs.agents]\nbrokenbot = badbots:make_broken\n")
    sys.modules.pop("badbots", None)
    outside.entry_points.cache_clear()
    yield tmp_path
    outside.entry_points.cache_clear()
    sys.modules.pop("badbots", None)


@pytest.mark.parametrize("spec, says", [
    ("brokenbot", r"agent 'brokenbot': its factory badbots:make_broken raised RuntimeError: no weights in "
                  r"\./weights\.bin \(badbots\.py:5\)$"),
    ("badbots:make_broken", r"agent 'badbots:make_broken': its factory badbots:make_broken raised RuntimeError"),
    ("badbots:make_picky:depth=0", r"its factory badbots:make_picky raised ValueError: depth must be >= 1 "
                                   r"\(badbots\.py:9\)$"),
    ("badbots:Crashing", r"its factory badbots:Crashing raised KeyError: 'model' \(badbots\.py:14\)$"),
    ("badbots:make_buggy", r"its factory badbots:make_buggy raised TypeError: object of type 'NoneType'"),
    ("badbots:make_picky:depht=2", r"agent 'badbots:make_picky:depht=2': bad parameters: .*'depht'"),
])
def test_a_factory_that_raises_is_one_line(factories, spec, says):
    with pytest.raises(ValueError, match=says) as caught:
        make_agent(spec, "ring_rang", seed=0)
    assert "\n" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_an_agent_class_handed_to_the_harness_that_raises_is_one_line(factories):
    import badbots

    with pytest.raises(ValueError, match=r"agent 'Crashing': its factory badbots:Crashing raised KeyError"):
        evaluate_agents([badbots.Crashing, "random"], game="ring_rang", deals=1)


def test_the_command_line_prints_one_line_and_no_traceback(factories):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(factories), *sys.path])}
    for spec in ("brokenbot", "badbots:Crashing"):
        out = subprocess.run([sys.executable, "-m", "cardenvs.cli", "eval", "--agents", spec, "random", "--deals",
                              "1", "--no-progress"], env=env, cwd=factories, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith(f"error: agent '{spec}': its factory badbots:")
