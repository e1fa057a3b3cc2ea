"""The ``cardenvs`` command line (issue 18): help, --version, one-line errors, core-install messages,
replay for one observer, one card notation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from games import BUILTIN_GAMES

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.cards import parse_card, pretty
from cardenvs.cli import COMMANDS
from cardenvs.cli import main as cli_main


def test_help_aligns_every_command_and_version_prints(capsys):
    """Item 6: `cardenvs -h` lines up train-vector with the rest; --version exists."""
    assert cli_main(["-h"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert len(lines) == len(COMMANDS)
    columns = {line.index(text) for line, (_, text) in zip(lines, COMMANDS.values(), strict=True)}
    assert len(columns) == 1  # every description starts in the same column
    assert cli_main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("cardenvs 0.")


def test_a_command_whose_extra_is_missing_names_the_extra(monkeypatch, capsys):
    """Item 8: on a core install `cardenvs train-vector` says what to install, not a traceback."""
    import cardenvs.cli as cli

    def missing(name: str):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(cli, "import_module", missing)
    assert cli_main(["train-vector", "--config", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert err == "error: cardenvs train-vector needs torch, which is not installed: pip install 'cardenvs[train]'\n"


def test_yaml_and_training_libraries_missing_are_one_line_errors(monkeypatch, tmp_path):
    """Item 8: --config without PyYAML, and training without its libraries, name `pip install 'cardenvs[train]'`."""
    import builtins

    from cardenvs.train import config_files

    real_import = builtins.__import__

    def no_yaml(name, *args, **kwargs):
        if name == "yaml":
            raise ImportError("No module named 'yaml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    with pytest.raises(ValueError, match=r"needs PyYAML: pip install 'cardenvs\[train\]'"):
        config_files.read_yaml_mapping(tmp_path / "c.yaml", "eval config")
    monkeypatch.setattr(builtins, "__import__", real_import)
    with pytest.raises(ValueError, match=r"cardenvs train needs no_such_module_x \(not installed\)"):
        config_files.require("cardenvs train", "json", "no_such_module_x")


def test_without_openskill_the_rating_says_it_is_elo(monkeypatch, capsys):
    """Item 8: no silent Elo with sigma 0.00: a note names the extra and the table shows no sigma."""
    from cardenvs.train import evaluate as module
    from cardenvs.train.stats import Elo

    class EloOnly:
        def __init__(self) -> None:
            self.model, self.elo, self.kind = None, Elo(), "Elo"

        rate = module.Rating.rate
        table = module.Rating.table

    monkeypatch.setattr(module, "Rating", EloOnly)
    assert module.main(["--agents", "random", "rules_basic", "rules_strong", "--deals", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "openskill is not installed" in captured.err and "cardenvs[train]" in captured.err
    assert "rating (Elo)" in captured.out and "sigma 0.00" not in captured.out


def test_bench_without_torch_says_so_and_accepts_gin_python(monkeypatch, capsys, tmp_path):
    """Item 5 and 8: the batched rows become a skip line naming the extra; --gin-python is an option."""
    import builtins

    from cardenvs import bench

    real_import = builtins.__import__

    def no_torch(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "cardenvs" and fromlist and "vector" in fromlist:
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    rows = bench.batched_loops(0.01, [4], 1, 1)
    monkeypatch.setattr(builtins, "__import__", real_import)
    assert rows[0]["skipped"] == "torch is not installed: pip install 'cardenvs[train]'"
    assert "skipped" in bench.format_rows(rows)
    assert bench.main(["--gin-python", str(tmp_path / "nope"), "--no-batched", "--no-peers"]) == 2
    assert "--gin-python" in capsys.readouterr().err
    assert bench.main(["--seconds", "0"]) == 2


# ------------------------------------------------------------------ replay and notation
def _record(tmp_path, game: str = "ring_rang") -> str:
    from cardenvs.replay import record, save

    env = ring_rang_v0.env(episode="round") if game == "ring_rang" else rang_v0.env(num_players=3, episode="deal")
    env.reset(seed=4)
    actions = []
    for _ in range(6):
        action = env.unwrapped.legal_actions()[0]
        env.step(action)
        actions.append(action)
    kwargs = {"episode": "round"} if game == "ring_rang" else {"num_players": 3, "episode": "deal"}
    path = tmp_path / f"{game}.json"
    save(record(game, kwargs, 4, None, actions), path)
    return str(path)


@pytest.mark.parametrize("game", BUILTIN_GAMES)  # _record knows the built-ins
def test_replay_for_one_observer_hides_the_other_hands_in_the_terminal(tmp_path, capsys, game):
    """Item 11: --observer hides the other hands in the terminal as the PNG/HTML do; player_0 is accepted."""
    from cardenvs.replay import main as replay_main

    path = _record(tmp_path, game)
    assert replay_main([path]) == 0
    everything = capsys.readouterr().out
    assert "hidden" not in everything
    for observer in ("0", "player_0"):
        assert replay_main([path, "--observer", observer]) == 0
        lines = capsys.readouterr().out.splitlines()
        seat_lines = [line for line in lines if "player_" in line and ":" in line and "to " not in line]
        hidden = [line for line in seat_lines if "(hidden)" in line]
        assert hidden and not any("player_0" in line for line in hidden)
    assert replay_main([path, "--observer", "player_9"]) == 2
    assert "seats 0.." in capsys.readouterr().err


def test_one_card_notation_in_every_view(tmp_path):
    """Item 12: 10♥ and JK everywhere text is shown (play, observation_text, ansi render, HTML captions)."""
    from cardenvs.play import card_text
    from cardenvs.replay import html_replay, load, pretty_action

    assert pretty(parse_card("TH")) == card_text(parse_card("TH"), False) == "10\u2665"
    assert pretty(52) == card_text(52, False) == "JK"
    assert pretty_action("play TD") == "play 10\u2666" and pretty_action("discard Joker") == "discard JK"
    assert pretty_action("play T") == "play 10"
    env = rang_v0.env(num_players=4, render_mode="ansi")
    env.reset(seed=1)
    text = env.render() + env.unwrapped.observation_text("player_0")
    assert "Jk" not in text and not any(f"T{s}" in text for s in "\u2663\u2666\u2665\u2660")
    page = html_replay(load(_record(tmp_path)))
    captions = re.findall(r"step \d+: player_\d ([^\"]*)", page)
    assert captions and not any(re.search(r"\b[2-9TJQKA][CDHS]\b", c) for c in captions), captions


# ------------------------------------------------------------------ docs and configs
REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_eval_configs_write_their_results():
    """Item 3: configs/eval_*.yaml name an out: folder, as the README promises files."""
    from cardenvs.train.evaluate import load_config

    for path in sorted(REPO.glob("configs/eval_*.yaml")):
        assert load_config(path).out, path


def test_changelog_records_each_env_version_and_the_license_exists():
    """Item 17: a CHANGELOG with every env's _vN, and the LICENSE pyproject names."""
    import cardenvs

    text = (REPO / "CHANGELOG.md").read_text()
    for env in cardenvs.__all__:
        assert f"`{env}`" in text
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def test_pettingzoo_make_by_id_after_import_cardenvs():
    """Item 13: the README's pettingzoo.make line works as written (import cardenvs first; PettingZoo >= 1.27)."""
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "make"):
        pytest.skip("PettingZoo < 1.27 has no registry")
    import cardenvs  # noqa: F401

    env = pettingzoo.make("aec", "cardenvs/ring_rang_v0", episode="round")
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1", "player_2", "player_3"]


# ------------------------------------------------------------------ Ctrl-C (issue 35, item 9)
@pytest.mark.parametrize("command", ["eval", "train", "bench", "distill"])
def test_ctrl_c_is_one_line_and_status_130(monkeypatch, capsys, command):
    import cardenvs.cli as cli

    class Interrupted:
        @staticmethod
        def main(argv):
            raise KeyboardInterrupt

    monkeypatch.setattr(cli, "import_module", lambda name: Interrupted)
    assert cli_main([command]) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip() == f"cardenvs {command}: interrupted"


def _sleep_then_return(seconds):
    import time

    time.sleep(seconds)
    return seconds


def test_ctrl_c_stops_the_worker_processes_at_once():
    """Without terminating them, leaving the pool would wait for the workers' jobs (a minute here)."""
    import os
    import signal
    import threading
    import time

    from cardenvs.train.evaluate import worker_map

    started = time.monotonic()
    threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        list(worker_map(_sleep_then_return, [60, 60, 60], 2))
    assert time.monotonic() - started < 50


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc for the workers")
def test_ctrl_c_in_cardenvs_eval_with_workers_exits_cleanly():
    """The terminal's Ctrl-C reaches the whole process group: the command and its workers."""
    import os
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "cardenvs.cli", "eval", "--game", "ring_rang", "--agents", "rules_strong",
               "random", "--deals", "100000", "--workers", "2", "--no-progress"]
    process = subprocess.Popen(command,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 120
    while len(children.read_text().split()) < 2 and time.monotonic() < deadline:  # the two workers are up
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err.strip() == "cardenvs eval: interrupted" and "Traceback" not in out


@pytest.mark.parametrize(("command", "config", "right"), [
    ("train-vector", "configs/quick_ring_rang.yaml", "cardenvs train"),
    ("train", "configs/vector_full_rang.yaml", "cardenvs train-vector"),
    ("eval", "configs/quick_ring_rang.yaml", "cardenvs train"),
])
def test_a_config_of_another_command_names_that_command(capsys, command, config, right):
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    root = Path(__file__).resolve().parents[1]
    assert cli_main([command, "--config", str(root / config)]) == 2
    err = capsys.readouterr().err
    assert f"is a `{right}` config" in err and f"run `{right} --config" in err and "known:" not in err


def test_bench_help_says_what_seconds_costs(capsys):
    with pytest.raises(SystemExit):
        cli_main(["bench", "-h"])
    assert "2 loops per game and table size" in " ".join(capsys.readouterr().out.split())
