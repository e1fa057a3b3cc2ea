"""Terminal play: input parsing, the move lists, and whole games played as the human in a real terminal (tmux)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.cards import parse_card
from cardenvs.play import (
    Choice,
    QuitGame,
    card_text,
    main,
    parse_choice,
    use_color,
)
from cardenvs.rang.text import rang_choices
from cardenvs.replay import load, replay
from cardenvs.ring_rang.text import ring_rang_choices

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ parsing
def _ring_rang_in_play(seed: int = 0):
    """A RING RANG env in the play phase (trump chosen), the chooser to lead."""
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=seed, options={"chooser": 0})
    env.step(52 + 2)  # trump hearts
    return env


def test_ring_rang_choices_name_every_legal_card_and_knock():
    env = _ring_rang_in_play()
    game = env.unwrapped.game
    legal = env.unwrapped.legal_actions()
    choices = ring_rang_choices(game, legal, env.unwrapped.action_names, color=False)
    assert [c.action for c in choices] == legal
    for choice in choices:
        if choice.action < 52:
            assert parse_choice(env.unwrapped.action_names[choice.action][5:], choices) == choice.action
    assert choices[-1].action == 56  # with seed 0 the chooser holds the trump Ace and may knock
    assert parse_choice("k", choices) == parse_choice("knock", choices) == 56
    assert parse_choice(str(len(choices)), choices) == 56
    assert parse_choice(f"  {choices[0].label.lower()} ", choices) == choices[0].action  # "q♥" style works too


def test_parse_choice_codes_tens_numbers_and_errors():
    choices = [
        Choice(parse_card("TD"), "10♦", {"td", "10d", "t♦", "10♦"}),
        Choice(parse_card("QH"), "Q♥", {"qh", "q♥"}),
        Choice(56, "knock", {"k", "knock"}),
    ]
    assert parse_choice("10D", choices) == parse_card("TD")
    assert parse_choice("td", choices) == parse_card("TD")
    assert parse_choice("QH", choices) == parse_card("QH")
    assert parse_choice("2", choices) == parse_card("QH")
    assert parse_choice("K", choices) == 56
    with pytest.raises(ValueError, match="no move number 4; choose 1-3"):
        parse_choice("4", choices)
    with pytest.raises(ValueError, match="'AS' is not a legal move now"):
        parse_choice("AS", choices)
    with pytest.raises(ValueError, match="type the number"):
        parse_choice("   ", choices)
    for text in ("q", "Q", "quit", " QUIT "):
        with pytest.raises(QuitGame):
            parse_choice(text, choices)


def test_rang_q_is_the_queen_and_lower_case_q_quits():
    queen_kind, ten_kind = 10, 8
    choices = [Choice(ten_kind, "10", {"t", "10", "td"}), Choice(queen_kind, "Q", {"q", "qh"})]
    assert parse_choice("Q", choices, rank_q=True) == queen_kind
    assert parse_choice("QH", choices, rank_q=True) == queen_kind
    assert parse_choice("10", choices, rank_q=True) == ten_kind  # "10" names the rank, not move number 10
    with pytest.raises(QuitGame):
        parse_choice("q", choices, rank_q=True)


def test_rang_choices_from_a_real_deal():
    env = rang_v0.env(num_players=3)
    env.reset(seed=2)
    game = env.unwrapped.game
    legal = env.unwrapped.legal_actions()
    choices = rang_choices(game, legal, color=False)
    assert [c.action for c in choices] == legal
    hand = game.hands[game.current]
    for choice in choices:
        kind = choice.action % 14
        for card in hand[kind]:  # every card of that rank in hand selects the play of the rank
            assert parse_choice("JK" if kind == 13 else card_text(card, False), choices, rank_q=True) == choice.action


def test_colours_follow_flag_and_no_color(monkeypatch):
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(False, Tty())
    assert not use_color(True, Tty())
    assert not use_color(False, object())  # not a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(False, Tty())
    assert card_text(parse_card("QH"), True) == "\x1b[31mQ\u2665\x1b[0m"
    assert card_text(parse_card("QS"), True) == "Q\u2660"
    assert card_text(parse_card("TD"), False) == "10\u2666"


# ------------------------------------------------------------- in-process games
def _first_legal_reader(log: list[str], bad_first: str | None = None):
    """A stand-in for input(): a bad entry first (if given), then always move 1."""
    pending = [bad_first] if bad_first else []

    def read(prompt: str) -> str:
        log.append(prompt)
        return pending.pop() if pending else "1"

    return read


def test_play_a_round_in_process_and_replay_it(tmp_path, capsys):
    path = tmp_path / "round.json"
    prompts: list[str] = []
    argv = ["ring-rang", "--episode", "round", "--seed", "11", "--opponents", "random", "--partner", "random",
            "--record", str(path)]
    assert main(argv, read=_first_legal_reader(prompts, bad_first="ZZ")) == 0
    out = capsys.readouterr().out
    assert "! 'ZZ' is not a legal move now" in out
    assert "=== round over" in out
    assert len(prompts) >= 14  # trump or not, 13 cards, plus the bad entry
    data = load(path)
    assert data["agents"] == ["human", "random", "random", "random"]
    env = replay(data)
    assert env.agents == []  # the round was played to its end
    game = env.unwrapped.game
    assert game.over and sum(game.rounds[0]["lifted"]) == 13


def test_quit_saves_an_unfinished_game(tmp_path, capsys):
    path = tmp_path / "quit.json"
    answers = iter(["1", "1", "q"])
    assert main(["rang", "--players", "2", "--seed", "3", "--opponents", "random", "--record", str(path)],
                read=lambda prompt: next(answers)) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "You quit the game." in out and "(unfinished)" in out
    env = replay(load(path))
    assert env.agents  # still going: the record holds the moves made so far


def test_search_opponents_get_the_env(capsys):
    """A needs_env agent (PIMC) is shown the env before it acts, as in the evaluation harness."""
    answers = iter(["1"] * 200)
    argv = ["rang", "--players", "2", "--episode", "deal", "--seed", "3", "--opponents", "pimc:iterations=4,worlds=2"]
    assert main(argv, read=lambda prompt: next(answers)) == 0
    assert "=== deal over" in capsys.readouterr().out


def test_bad_arguments_are_clear_errors(capsys):
    assert main(["ring-rang", "--players", "3"]) == 2
    assert "always 4 players" in capsys.readouterr().err
    assert main(["rang", "--opponents", "random", "random"]) == 2
    assert "--opponents: give 1 spec or 3" in capsys.readouterr().err
    assert main(["rang", "--seat", "7"]) == 2
    assert "--seat must be 0..3" in capsys.readouterr().err
    assert main(["poker"]) == 2
    assert "unknown game 'poker'; expected ring_rang" in capsys.readouterr().err  # the words of eval


# ------------------------------------------------------------------- tmux
TMUX = shutil.which("tmux")
SUIT_LETTER = {"\u2663": "C", "\u2666": "D", "\u2665": "H", "\u2660": "S"}


class Terminal:
    """A program running in a detached tmux session on a private tmux server."""

    def __init__(self, command: str, name: str):
        self.socket = f"cardenvs-test-{name}-{id(self)}"
        self.tmux([
            "new-session", "-d", "-s", "play", "-x", "200", "-y", "50",
            f"{command}; echo __EXIT__ $?; sleep 600",
        ])  # fmt: skip

    def tmux(self, args: list[str]) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True).stdout

    def screen(self, escapes: bool = False) -> str:
        return self.tmux(["capture-pane", "-p", "-J", "-S", "-1000", *(["-e"] if escapes else []), "-t", "play"])

    def type(self, text: str) -> None:
        self.tmux(["send-keys", "-t", "play", "-l", text])
        self.tmux(["send-keys", "-t", "play", "Enter"])

    def wait_for(self, pattern: str, limit_s: float = 60.0) -> str:
        """The screen once ``pattern`` (a regex) shows on it; fails with the screen if it never does."""
        deadline = time.monotonic() + limit_s
        while True:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {pattern!r}; the terminal shows:\n{screen[-3000:]}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def _play_in_tmux(args: str, name: str, name_of_first: Callable[[str], str], tmp_path: Path) -> tuple[str, str, int]:
    """Play as the human, always choosing the first legal move (typed by name or by number, alternately)."""
    record = tmp_path / f"{name}.json"
    command = f"cd {REPO} && {sys.executable} -m cardenvs.cli play {args} --record {record}"
    terminal = Terminal(command, name)
    try:
        decision = 1
        terminal.wait_for(r"move 1: your choice> ")
        terminal.type("nonsense")
        terminal.wait_for(r"! 'nonsense' is not a legal move now")
        while True:
            screen = terminal.wait_for(rf"move {decision}: your choice> |__EXIT__")
            if re.search(rf"move {decision}: your choice> ", screen) is None:
                break
            legal_line = [line for line in screen.splitlines() if line.startswith("Legal: ")][-1]
            first = re.match(r"Legal: \[1\] (.+?)(?:  \[2\]|$)", legal_line).group(1)
            typed = name_of_first(first) if decision % 2 else "1"
            terminal.type(typed)
            decision += 1
        assert "__EXIT__ 0" in screen, screen[-2000:]
        colored = terminal.screen(escapes=True)
    finally:
        terminal.close()
    return screen, colored, decision - 1


def _ring_rang_name(label: str) -> str:
    """``Q♥`` -> ``QH``, ``10♦`` -> ``10D``; a trump choice by its letter; a knock by ``k``."""
    if label.startswith("trump "):
        return SUIT_LETTER[label.split()[1]]
    if label.startswith("knock"):
        return "k"
    return label[:-1] + SUIT_LETTER[label[-1]]


def _rang_name(label: str) -> str:
    """``Q (Q♥ Q♠)`` -> ``Q`` (the rank), ``discard 7 (7♥)`` -> ``7``, ``JK`` -> ``JK``."""
    words = label.split()
    return words[1] if words[0] == "discard" else words[0]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal test needs it")
def test_play_a_whole_ring_rang_round_in_a_real_terminal(tmp_path):
    screen, colored, decisions = _play_in_tmux(
        "ring-rang --episode round --seed 21 --opponents random", "ringrang", _ring_rang_name, tmp_path
    )
    assert "=== round over" in screen and "game saved to" in screen
    assert "\x1b[31m" in colored  # red suits in colour on a terminal
    data = load(tmp_path / "ringrang.json")
    env = replay(data)
    assert env.agents == [] and sum(env.unwrapped.game.rounds[0]["lifted"]) == 13
    agent_moves = len(data["actions"]) - decisions
    assert decisions >= 13 and agent_moves >= 39  # 13 cards each for the 3 agents (and their knocks)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal test needs it")
def test_play_a_whole_rang_deal_in_a_real_terminal(tmp_path):
    screen, colored, decisions = _play_in_tmux(
        "rang --players 3 --episode deal --seed 8 --opponents random --no-color", "rang", _rang_name, tmp_path
    )
    assert "=== deal over" in screen
    assert "\x1b[31m" not in colored  # --no-color
    env = replay(load(tmp_path / "rang.json"))
    game = env.unwrapped.game
    assert env.agents == [] and game.match_over and not game.truncated
    assert game.last_points[game.went_out] == 0
    assert decisions >= 2


def test_default_opponent_is_rules_strong_when_registered(monkeypatch):
    from cardenvs.agents import registry
    from cardenvs.play import default_opponent

    monkeypatch.setitem(registry.AGENTS, "rang", {"random": registry.AGENTS["rang"]["random"]})
    assert default_opponent("rang") == "random"
    monkeypatch.setitem(registry.AGENTS, "rang", {**registry.AGENTS["rang"], "rules_strong": "x:y"})
    assert default_opponent("rang") == "rules_strong"


# ------------------------------------------------------------- issue 18
def test_move_errors_say_above_one_move_and_why_a_card_is_not_legal(capsys):
    """Item 10: "above" (the list is printed above the prompt), "choose 1" for one move, and why a real card
    is refused ("must follow ♣") while a typo gets the generic line; the prompt shows no [n] default."""
    one = [Choice(56, "knock", {"k"})]
    with pytest.raises(ValueError, match="choose 1$"):
        parse_choice("2", one)
    with pytest.raises(ValueError, match="a move shown above"):
        parse_choice("7x", one)
    from cardenvs.play import TerminalGame

    prompts: list[str] = []
    answers = iter(["7x", "__card__", "1"])
    session = TerminalGame("ring_rang", {"episode": "round"}, 0, ["random"], 5, False, read=lambda p: "")
    env = session.env
    env.reset(seed=5, options={"chooser": 1})
    game = session.raw.game
    while game.trump < 0 or not game.trick_cards or game.to_act != 0:  # play on until seat 0 must answer a lead
        env.step(env.unwrapped.legal_actions()[0])
    led = game.trick_cards[0] // 13
    hand = [c for c in range(52) if game.hands[0] >> c & 1]
    off = [c for c in hand if c // 13 != led]
    if not off or not any(c // 13 == led for c in hand):
        pytest.skip("this deal gives seat 0 no follow-suit choice")
    out: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        text = next(answers)
        return card_text(off[0], False) if text == "__card__" else text

    session.read, session.write = read, out.append
    session.ask_human()
    text = "\n".join(out)
    assert "'7x' is not a legal move now" in text and "shown above" in text
    assert f"you must follow {'♣♦♥♠'[led]}" in text
    assert prompts[0] == "move 1: your choice> "


def test_rang_names_a_rank_not_held_and_a_rank_that_does_not_go():
    from cardenvs.play import TerminalGame

    session = TerminalGame("rang", {"num_players": 2}, 0, ["random"], 2, False)
    session.raw.reset(seed=2)
    game = session.raw.game
    held = [k for k in range(13) if game.hands[0][k]]
    missing = [k for k in range(13) if not game.hands[0][k]]
    assert session.why_not("notacard") is None
    if missing:
        assert session.why_not("23456789TJQKA"[missing[0]]).startswith("you hold no")
    legal = set(session.raw.legal_actions())
    blocked = [k for k in held if k not in legal]
    if blocked and game.phase == 0 and game.current == 0:
        assert "does not go on" in session.why_not("10" if blocked[0] == 8 else "23456789TJQKA"[blocked[0]])


def test_play_roles_partner_and_opponents():
    """Item 6: in RING RANG --opponents names the other team only; the partner is --partner."""
    from cardenvs.play import seat_specs

    assert seat_specs("ring_rang", 4, 0, ["random"], None) == ["random", "rules_strong", "random"]
    # seat 1: left is seat 2, the partner seat 3, right seat 0
    assert seat_specs("ring_rang", 4, 1, ["random", "rules_basic"], "trained") == ["rules_basic", "random", "trained"]
    with pytest.raises(ValueError, match="the partner is --partner"):
        seat_specs("ring_rang", 4, 0, ["random"] * 3, None)
    with pytest.raises(ValueError, match="Rang has no partners"):
        seat_specs("rang", 4, 0, None, "random")
    assert seat_specs("rang", 3, 0, ["random"], None) == ["random", "random"]


@pytest.mark.parametrize("argv, message", [
    (["ring-rang", "--seed", "-5"], "--seed: expected an int >= 0, got -5"),
    (["ring-rang", "--record", "/nonexistent/x.json"], "--record /nonexistent/x.json: folder /nonexistent does not"),
    (["rang", "--opponents", "pimc:iterations=-5"], "iterations must be an int >= 1"),
])
def test_play_refuses_bad_options_before_the_game(argv, message, capsys):
    """Item 1: one line on stderr, exit 2, before any card is dealt (read is never called)."""
    def never(prompt: str) -> str:
        raise AssertionError("the game started")

    assert main(argv, read=never) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_ctrl_c_saves_the_record_like_q(tmp_path, capsys):
    """Item 9: Ctrl-C stops the game without a traceback and --record keeps the moves so far."""
    path = tmp_path / "int.json"
    answers = iter(["1", "1"])

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise KeyboardInterrupt from None

    assert main(["rang", "--players", "2", "--seed", "3", "--opponents", "random", "--record", str(path)],
                read=read) == 0
    out = capsys.readouterr().out
    assert "Interrupted (Ctrl-C)" in out and "(unfinished)" in out
    assert len(load(path)["actions"]) >= 2
