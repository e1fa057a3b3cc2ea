"""Help texts that say what is true for the game asked about (issue 44 item 7)."""

from __future__ import annotations

import pytest

from cardenvs.agents.registry import available_agents
from cardenvs.games import GAME_NAMES, episodes_help, game_spec


def help_of(capsys, main, argv) -> str:
    with pytest.raises(SystemExit):
        main(argv)
    return " ".join(capsys.readouterr().out.split())


def test_an_episode_kind_is_named_once_where_both_units_play_the_same():
    text = episodes_help()
    for name in GAME_NAMES:
        kinds = game_spec(name).episodes
        assert f"{name}: {kinds['game']} or {kinds['deal']}" in text if kinds["game"] != kinds["deal"] \
            else f"{name}: {kinds['deal']}" in text
    assert "crazy_eights: deal or deal" not in text


@pytest.mark.parametrize("command", ["serve", "play"])
def test_serve_and_play_help_do_not_repeat_a_kind(capsys, command):
    from importlib import import_module

    text = help_of(capsys, import_module(f"cardenvs.{command}").main, ["--help"])
    assert "deal or deal" not in text and "what one game is (" in text


def test_eval_help_lists_the_agents_of_the_game_asked_about(capsys):
    from cardenvs.train.evaluate import main

    grouped = help_of(capsys, main, ["--help"])
    shared = [a for a in available_agents(GAME_NAMES[0]) if all(a in available_agents(g) for g in GAME_NAMES)]
    assert f"Agents of every game: {', '.join(shared)};" in grouped
    for name in GAME_NAMES:
        own = [a for a in available_agents(name) if a not in shared]
        if own:
            assert f"{name} also: {', '.join(own)}" in grouped
    for name in GAME_NAMES:
        text = help_of(capsys, main, ["--game", name.replace("_", "-"), "--help"])  # any spelling of the game
        assert f"Agents of {name}: {', '.join(available_agents(name))}; or module.path:attr" in text
        others = {a for g in GAME_NAMES for a in available_agents(g)} - set(available_agents(name))
        assert not any(f" {a}," in text or f" {a};" in text for a in others), name
    assert "Agents of every game" in help_of(capsys, main, ["--help", "--game", "poker"])  # not a game: all
