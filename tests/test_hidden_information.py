"""Issue 34, items 1-3: no app shows an observer a card it could not see, nor the seed before the game is over.

One oracle judges every app. A recorded game is replayed here, and for every state ``t`` (0 = the deal, ``t`` =
after action ``t``) it lists the cards hidden from the observer (the other hands, the Rang stock) and the
cards the observer sees (the own hand, the table, the card a step just played face up). Each app is driven
through whole games and cut into :class:`Chunk` s: a piece of text (or a table view) the observer got, with
the range of states it covers. A chunk may name a card only if the card was not hidden in that range, or was
visible in it (a Rang deck holds two cards of one code); it never holds the seed before the game is over.

Apps driven: ``cardenvs play`` (the terminal), ``cardenvs serve`` (every HTTP reply, two games in a row),
``cardenvs replay --observer`` (the text, the HTML page's title, captions and views, the PNG's view), and an
outside bot (``exec:``, every message its process reads). To add another: write a driver that plays whole
games and returns a :class:`Transcript` (the record, the observer, its chunks with the states each covers),
and add it to ``DRIVERS``; ``test_no_app_shows_a_hidden_card_or_the_seed`` runs the oracle on it.
"""

from __future__ import annotations

import json
import random
import re
import threading
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cardenvs.cards import CODES, SUIT_SYMBOLS, SUITS
from cardenvs.replay import load, steps

SEED = 918273645  # nine digits: in no output by chance


# ------------------------------------------------------------------ the oracle
@dataclass
class Knowledge:
    """Per state of a recorded game: the card codes hidden from the observer and those it sees."""

    hidden: list[Counter] = field(default_factory=list)
    visible: list[set[str]] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)  # the seat of action t (index t - 1)
    actions: list[int] = field(default_factory=list)

    def forbidden(self, first: int, last: int) -> set[str]:
        """Codes hidden somewhere in states first..last and visible in none of them."""
        hidden = set().union(*(self.hidden[t] for t in range(first, last + 1)))
        return hidden - set().union(*(self.visible[t] for t in range(first, last + 1)))


def _ring_rang_state(game: Any, observer: int, played: int | None) -> tuple[Counter, set[str]]:
    from cardenvs.ring_rang.engine import bits_to_cards

    dealt = set().union(*(bits_to_cards(hand) for hand in game.hands), bits_to_cards(game.played))
    hidden = Counter(CODES[c] for s in range(4) if s != observer for c in bits_to_cards(game.hands[s]))
    hidden.update(CODES[c] for c in game.deck if c not in dealt)  # the trump phase: the cards not dealt yet
    visible = set(bits_to_cards(game.hands[observer])) | set(game.trick_cards)
    visible |= {c for _, cards, _, _ in game.history for c in cards}
    if played is not None:
        visible.add(played)
    return hidden, {CODES[c] for c in visible}


def _rang_state(game: Any, observer: int, played: int | None) -> tuple[Counter, set[str]]:
    hidden = Counter(CODES[c] for s in range(game.num_players) if s != observer for c in game.hand_cards(s))
    hidden.update(CODES[c] for c in game.stock)
    visible = set(game.hand_cards(observer)) | set(game.pile) | ({played} if played is not None else set())
    return hidden, {CODES[c] for c in visible}


def _face_up_card(game_name: str, before: Any, seat: int, action: int) -> int | None:
    """The card a step shows to every seat: a card played (not a Rang discard, which is face down)."""
    if game_name == "rang":
        from cardenvs.rang.engine import DISCARD_OFFSET

        return before.hands[seat][action][0] if action < DISCARD_OFFSET else None
    from cardenvs.ring_rang.engine import ACTION_DECLARE, ACTION_TURNED

    if action < 52:
        return action
    return action - ACTION_TURNED if ACTION_TURNED <= action < ACTION_DECLARE else None


def knowledge(data: dict[str, Any], observer: int) -> Knowledge:
    state_of = _rang_state if data["env"] == "rang" else _ring_rang_state
    known = Knowledge()
    before = None
    for env, agent, action in steps(data):
        raw = env.unwrapped
        played = None
        if action is not None:
            seat = raw.possible_agents.index(agent)
            known.seats.append(seat)
            known.actions.append(action)
            played = _face_up_card(data["env"], before, seat, action)
        hidden, visible = state_of(raw.game, observer, played)
        known.hidden.append(hidden)
        known.visible.append(visible)
        before = raw.game.clone()
    return known


CARD = re.compile(r"(?<![A-Za-z0-9])(?:(10|[2-9TJQKA])([\u2663\u2666\u2665\u2660CDHS])|JK)(?![A-Za-z0-9])")


def card_mentions(text: str) -> set[str]:
    """The card codes a text names, in either notation (``QH``, ``Q♥``, ``10♦``, ``JK``)."""
    found = set()
    for match in CARD.finditer(text):
        rank, suit = match.groups()
        if rank is None:
            found.add("JK")
            continue
        letter = suit if suit in SUITS else SUITS[SUIT_SYMBOLS.index(suit)]
        found.add(("T" if rank == "10" else rank) + letter)
    return found


@dataclass
class Chunk:
    """What the observer got (text, or a table view as a dict) and the states it covers."""

    first: int
    last: int
    content: str | dict[str, Any]
    where: str
    seed_allowed: bool = False  # the game is over: its seed may be shown


@dataclass
class Transcript:
    record: dict[str, Any]
    observer: int
    chunks: list[Chunk]


def leaks(transcript: Transcript) -> list[str]:
    """Every hidden card, hidden move and early seed in a transcript (empty: nothing leaked)."""
    known = knowledge(transcript.record, transcript.observer)
    seed = str(transcript.record["seed"])
    found = []
    for chunk in transcript.chunks:
        text = chunk.content
        if isinstance(text, dict):  # a table view: the other hands are face down
            for seat in text["seats"]:
                if seat["name"] != f"player_{transcript.observer}" and seat.get("cards") is not None:
                    found.append(f"{chunk.where}: the hand of {seat['name']} is shown")
            text = json.dumps(text, ensure_ascii=False)
        shown = card_mentions(text) & known.forbidden(chunk.first, chunk.last)
        if shown:
            found.append(f"{chunk.where} (states {chunk.first}..{chunk.last}) names hidden {sorted(shown)}")
        if not chunk.seed_allowed and len(seed) >= 7 and seed in text:
            found.append(f"{chunk.where}: the seed {seed} before the game is over")
    return found


# ------------------------------------------------------------------ the apps
GAMES = [
    ("ring-rang", {}, ["--opponents", "random", "--partner", "random"]),  # a whole game to 20 points
    ("rang", {"num_players": 3}, ["--players", "3", "--opponents", "random"]),  # a whole match
]
OBSERVER = 1


def play_driver(game: str, options: list[str], tmp_path: Path, capsys: Any) -> Transcript:
    """``cardenvs play``: the text between two prompts covers the states from one human move to the next."""
    from cardenvs.play import main

    rng = random.Random(5)
    texts: list[str] = []

    def read(prompt: str) -> str:
        out = re.sub(r"\n\(type the number, or .*\)\n", "\n", capsys.readouterr().out)  # the help names cards
        texts.append(out + prompt)
        count = len(re.findall(r"\[\d+\]", texts[-1].rsplit("Legal:", 1)[-1]))
        return str(rng.randrange(1, count + 1))

    path = tmp_path / "play.json"
    argv = [game, "--seat", str(OBSERVER), "--seed", str(SEED), "--record", str(path), "--no-color", *options]
    capsys.readouterr()
    assert main(argv, read=read) == 0
    texts.append(capsys.readouterr().out)
    data = load(path)
    known = knowledge(data, OBSERVER)
    decisions = [t for t, seat in enumerate(known.seats) if seat == OBSERVER]  # the state before each human move
    bounds = [0, *decisions, len(known.hidden) - 1]
    assert len(texts) == len(decisions) + 1
    chunks = [Chunk(bounds[i], bounds[i + 1], text, f"play output {i}") for i, text in enumerate(texts)]
    final, _, outro = texts[-1].rpartition("=== seed of this game")
    chunks[-1].content = final
    chunks.append(Chunk(bounds[-1], bounds[-1], outro, "play's last line", seed_allowed=True))
    assert str(SEED) in outro  # shown once the game is over
    return Transcript(data, OBSERVER, chunks)


def serve_drivers(game: str, env_kwargs: dict[str, Any], games: int = 2) -> list[Transcript]:
    """``cardenvs serve``: every reply to the page, over HTTP, for ``games`` games in a row."""
    from cardenvs.replay import env_name
    from cardenvs.serve import App, WebGame, make_server

    name = env_name(game)
    app = App(lambda s: WebGame(name, env_kwargs, OBSERVER, ["random"] * (3 if name == "ring_rang" else 2), s),
              SEED)
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"

    def call(path: str, body: Any = None) -> tuple[str, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"X-Cardenvs-Token": app.token, "Content-Type": "application/json"}
        with urllib.request.urlopen(urllib.request.Request(url + path, data=data, headers=headers), timeout=60) as r:
            text = r.read().decode()
        return text, json.loads(text)

    rng = random.Random(6)
    transcripts = []
    try:
        for number in range(games):
            replies = [call("/api/state") if number == 0 else call("/api/new", {})]
            while not replies[-1][1]["finished"]:
                state = replies[-1][1]
                replies.append(call("/api/move", {"action": rng.choice(state["moves"])["action"],
                                                  "turn": state["turn"]}))  # fmt: skip
            text, record = call("/api/record")
            assert record["seed"] == replies[-1][1]["seed"]
            chunks, previous, logged = [], 0, 0
            for i, (text, state) in enumerate(replies):
                where = f"serve game {number} reply {i}"
                turn, log = state["turn"], state.pop("log")
                chunks.append(Chunk(previous, turn, "\n".join(log[logged:]), where + " (new log lines)"))
                chunks.append(Chunk(turn, turn, state.pop("view"), where + " (view)"))
                chunks.append(Chunk(turn, turn, json.dumps(state, ensure_ascii=False), where,
                                    seed_allowed=state["finished"]))  # fmt: skip
                if not state["finished"]:
                    assert state["seed"] is None and str(record["seed"]) not in text
                previous, logged = turn, len(log)
            transcripts.append(Transcript(record, OBSERVER, chunks))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    return transcripts


def replay_driver(data: dict[str, Any], tmp_path: Path, capsys: Any, monkeypatch: Any,
                  observer: int | None = OBSERVER) -> Transcript:
    """``cardenvs replay --observer``: the terminal text, the HTML page (title, captions, views), the PNG's view."""
    import cardenvs.render
    from cardenvs.replay import main, save

    drawn = []
    real_draw = cardenvs.render.draw_view
    monkeypatch.setattr(cardenvs.render, "draw_view", lambda view: drawn.append(view) or real_draw(view))
    path, html, png = tmp_path / "game.json", tmp_path / "game.html", tmp_path / "game.png"
    save(data, path)
    capsys.readouterr()
    argv = [str(path), "--html", str(html), "--png", str(png)]
    assert main(argv + ([] if observer is None else ["--observer", str(observer)])) == 0
    last = len(data["actions"])
    chunks = [Chunk(last, last, capsys.readouterr().out, "replay text")]
    page = html.read_text(encoding="utf-8")
    frames = json.loads(re.search(r'<script id="frames" type="application/json">(.*?)</script>', page, re.S)
                        .group(1).replace("<\\/", "</"))  # fmt: skip
    skeleton = page.replace(re.search(r'<script id="frames".*?</script>', page, re.S).group(0), "")
    chunks.append(Chunk(0, last, skeleton, "replay HTML page (title)"))
    for t, frame in enumerate(frames):
        chunks.append(Chunk(max(t - 1, 0), t, frame["caption"], f"replay HTML caption {t}"))
        chunks.append(Chunk(t, t, frame["view"], f"replay HTML view {t}"))
    assert len(frames) == last + 1 and len(drawn) == 1 and png.stat().st_size > 0
    chunks.append(Chunk(last, last, drawn[0], "replay PNG view"))
    return Transcript(data, OBSERVER if observer is None else observer, chunks)


def hidden_moves_named(transcript: Transcript) -> list[str]:
    """Captions of the HTML replay that name the rank of a card another seat discarded face down (Rang)."""
    from cardenvs.rang.engine import DISCARD_OFFSET

    known = knowledge(transcript.record, transcript.observer)
    found = []
    for chunk in transcript.chunks:
        if not chunk.where.startswith("replay HTML caption") or chunk.last == 0:
            continue
        seat, action = known.seats[chunk.last - 1], known.actions[chunk.last - 1]
        if seat != transcript.observer and action >= DISCARD_OFFSET:
            rank = "JK" if action % DISCARD_OFFSET == 13 else "23456789TJQKA"[action % DISCARD_OFFSET]
            words = chunk.content.split(":", 1)[1].replace("10", "T").split()
            if rank in words or any(word.startswith(rank) and card_mentions(word) for word in words):
                found.append(f"{chunk.where}: {chunk.content!r}")
    return found


BOT = """#!PYTHON
import json, sys, zlib
for line in sys.stdin:
    print(line.rstrip("\\n"), file=sys.stderr, flush=True)  # every message, to the log
    message = json.loads(line)
    if message.get("type") == "act":
        legal = message["legal"]
        print(legal[zlib.crc32(line.encode()) % len(legal)], flush=True)
"""


def bot_driver(game: str, env_kwargs: dict[str, Any], tmp_path: Path) -> list[Transcript]:
    """An outside bot (``exec:``, docs/bot_protocol.md) in the observer's seat: every message its process reads
    (``hello``, ``start``, each ``act`` with the state it was sent at), logged by the bot itself."""
    import sys

    from cardenvs.agents.registry import make_agent
    from cardenvs.replay import env_name, make_env, record

    name = env_name(game)
    program = tmp_path / "echo_bot.py"
    program.write_text(BOT.replace("PYTHON", sys.executable))
    program.chmod(0o755)
    log = tmp_path / "echo_bot.log"
    env = make_env(name, env_kwargs)
    seats = env.unwrapped.num_players
    info = {"num_players": seats} if name == "rang" else {}
    bot = make_agent(f"exec:path={program},log={log}", name, seed=0, **info)
    others = {s: make_agent("random", name, seed=s, **info) for s in range(seats) if s != OBSERVER}
    env.reset(seed=SEED)
    actions, asked = [], []
    try:
        for agent in env.agent_iter():
            _, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = env.unwrapped.possible_agents.index(agent)
            if seat == OBSERVER:
                bot.observe_env(env)
                asked.append(len(actions))
                action = bot.act(env.observe(agent))
            else:
                action = others[seat].act(env.observe(agent))
            actions.append(int(action))
            env.step(action)
    finally:
        bot.close()
    messages = [json.dumps(json.loads(line), ensure_ascii=False)  # the cards as they read: Q♥, not \\u2665
                for line in log.read_text(encoding="utf-8").splitlines() if line]
    acts = [m for m in messages if json.loads(m)["type"] == "act"]
    assert len(acts) == len(asked) > 10
    chunks = [Chunk(0, 0, m, f"bot message {i}") for i, m in enumerate(messages) if json.loads(m)["type"] != "act"]
    chunks += [Chunk(t, t, m, f"bot act {i}") for i, (t, m) in enumerate(zip(asked, acts, strict=True))]
    data = record(name, env_kwargs, SEED, None, actions, ["bot" if s == OBSERVER else "random" for s in range(seats)])
    return [Transcript(data, OBSERVER, chunks)]


DRIVERS: dict[str, Callable[..., list[Transcript]]] = {"exec bot": bot_driver}  # more outside-agent kinds here


@pytest.mark.parametrize(("game", "env_kwargs", "options"), GAMES, ids=["ring_rang", "rang"])
def test_no_app_shows_a_hidden_card_or_the_seed(game, env_kwargs, options, tmp_path, capsys, monkeypatch):
    played = play_driver(game, options, tmp_path, capsys)
    served = serve_drivers(game, env_kwargs)
    transcripts = [played, *served]
    for record in (played.record, served[0].record):
        transcripts.append(replay_driver(record, tmp_path, capsys, monkeypatch))
    for name, driver in DRIVERS.items():
        transcripts += driver(game, env_kwargs, tmp_path)
        assert transcripts[-1].chunks, name
    for transcript in transcripts:
        assert len(transcript.record["actions"]) > 40
        assert any(card_mentions(c.content) for c in transcript.chunks if isinstance(c.content, str))  # cards read
        assert leaks(transcript) == []
        assert hidden_moves_named(transcript) == []
    assert served[1].record["seed"] != served[0].record["seed"] + 1  # a fresh seed, not the next one
    # the oracle is not blind: the view for everyone (no --observer) shows the hands, the seed and the discards
    everyone = replay_driver(played.record, tmp_path, capsys, monkeypatch, observer=None)
    found = leaks(everyone)
    assert any("the hand of" in line for line in found) and any("the seed" in line for line in found)
    assert any("names hidden" in line for line in found)
    if game == "rang":
        assert hidden_moves_named(everyone)


def test_serve_deals_every_game_from_fresh_entropy(monkeypatch):
    """Item 1: the next game's seed is drawn from ``secrets``, not derived from the last one shown."""
    import cardenvs.serve
    from cardenvs.serve import App

    drawn = iter([111, 222, 333])
    monkeypatch.setattr(cardenvs.serve.secrets, "randbelow", lambda n: next(drawn))
    made = []
    app = App(lambda s: made.append(s) or s, first_seed=7)  # type: ignore[arg-type, return-value]
    app.next_game()
    app.next_game()
    assert made == [7, 111, 222]
    assert App(lambda s: made.append(s) or s).seed == 333  # type: ignore[arg-type, return-value]


def test_play_shows_the_seed_only_at_the_end(capsys):
    """Item 2: the first line names the game and the seats, not the seed; the last line gives it."""
    from cardenvs.play import main

    assert main(["rang", "--players", "2", "--episode", "deal", "--seed", str(SEED), "--opponents", "random"],
                read=lambda prompt: "q") == 0  # fmt: skip
    lines = capsys.readouterr().out.strip().splitlines()
    assert str(SEED) not in "\n".join(lines[:-1]) and lines[0].startswith("=== Rang, 2 players; you are player_0")
    assert lines[-1] == f"=== seed of this game: {SEED} (--seed {SEED} deals it again)"
