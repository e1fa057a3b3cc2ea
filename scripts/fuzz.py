"""Fuzz both cardenvs games: legal play interleaved with bad calls, resets, copies and odd options.

Usage (long runs, outside the test suite; the suite runs a few episodes of the same fuzzer)::

    .venv/bin/python scripts/fuzz.py --minutes 10 --seed 1

Every bad call (an illegal, malformed or out-of-phase action, a bad seed, bad reset
options, bad constructor arguments, a malformed snapshot) must raise ValueError and
leave the env exactly as it was (snapshot and observations compared before and
after). Between bad calls the envs play random legal (or stalling, adversarial)
moves, sometimes reset mid-game (with or without seed and options), round-trip
through snapshot/restore, and step after the end. At the end of every episode the
card conservation, the rules' invariants and the rewards are checked. Every 40 episodes the apps are
fuzzed too (``cardenvs play`` with wrong input, ``cardenvs serve`` over HTTP with malformed requests,
``cardenvs replay --observer`` of their records and of crafted records: no crash, no 500, no hidden hand
or early seed), with crafted ``.npz`` policies, train configs and batched env states (``--no-apps``
skips these: they need the ``[train]`` extra). A progress
line is printed every few seconds, and a final report of games, steps and bad calls.
Exit status 1 if any failure was found (the first ones are printed).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.cards import CODES
from cardenvs.rang.engine import (
    ACE_KIND,
    DECK_54,
    DECK_108,
    DISCARD,
    DISCARD_OFFSET,
    JOKER_KIND,
    PLAY_AFTER_JOKER,
    PLAYABLE_ON,
    RangGame,
)
from cardenvs.ring_rang.engine import ACTION_DECLARE, ACTION_KNOCK, ACTION_TRUMP, ACTION_TURNED, PHASE_TRUMP

GAMES = ("rang", "ring_rang")

# Bad actions: every kind is tried by the fuzzer (see bad_actions()).
BAD_CALL_KINDS = (
    "masked",  # an in-range action the mask forbids (card not in hand, out of phase, knock not allowed, ...)
    "too_large",
    "negative",
    "float",
    "numpy_float",
    "str",
    "none_for_live_agent",
    "bool",
    "numpy_bool",
    "array",
    "list",
    "huge_int",
)


@dataclass
class Stats:
    """What a fuzz run tried, and what went wrong."""

    games: int = 0  # episodes played to their end and checked
    steps: int = 0  # legal steps
    bad_calls: int = 0  # rejected calls (each checked: ValueError, nothing changed)
    bad_by_kind: Counter = field(default_factory=Counter)
    masked_reasons: Counter = field(default_factory=Counter)
    resets_mid_game: int = 0
    copies: int = 0
    truncated: int = 0
    gym_episodes: int = 0
    app_games: int = 0  # games played through cardenvs play / serve (and replayed)
    app_requests: int = 0  # HTTP requests to cardenvs serve
    failures: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        if len(self.failures) < 50:
            self.failures.append(message)


# ------------------------------------------------------------------ helpers
def make_env(game: str, wrapped: bool, **kwargs: Any):
    module = rang_v0 if game == "rang" else ring_rang_v0
    return module.env(**kwargs) if wrapped else module.raw_env(**kwargs)


def fingerprint(env) -> tuple:
    """Snapshot plus the views and masks of every agent: what a rejected call must not change."""
    raw = env.unwrapped
    views = tuple(
        (raw.observe(agent)["observation"].tobytes(), raw.observe(agent)["action_mask"].tobytes())
        for agent in raw.possible_agents
    )
    return raw.snapshot(), views, raw.agent_selection, tuple(raw.agents)


def expect_rejected(env, call: Callable[[], Any], kind: str, stats: Stats, context: str,
                    state: Callable[[Any], Any] | None = None) -> None:
    """``call`` must raise ValueError and change nothing (``state(env)``: the AEC fingerprint by default)."""
    state = state or fingerprint
    before = state(env)
    try:
        call()
    except ValueError:
        pass
    except Exception as error:  # noqa: BLE001 - any other exception is a finding
        stats.fail(f"{context}: {kind}: {type(error).__name__} instead of ValueError: {error}")
    else:
        stats.fail(f"{context}: {kind}: accepted")
    if state(env) != before:
        stats.fail(f"{context}: {kind}: the env changed")
    stats.bad_calls += 1
    stats.bad_by_kind[kind] += 1


def masked_reason(game: str, raw, action: int) -> str:
    """Why the mask forbids ``action`` (for the report: out of phase, card not in hand, ...)."""
    g = raw.game
    if game == "rang":
        kind = action % 14
        held = len(g.hands[g.current][kind]) > 0
        if g.phase == DISCARD:
            return "play in discard phase" if action < 14 else "discard of a card not in hand"
        if action >= 14:
            return "discard in play phase"
        return "card not in hand" if not held else "card not playable on top"
    if g.phase == PHASE_TRUMP:
        return "trump again" if ACTION_TRUMP <= action < ACTION_KNOCK else "card/knock in trump phase"
    if ACTION_TRUMP <= action < ACTION_KNOCK:
        return "trump choice in play phase"
    if action == ACTION_KNOCK:
        return "knock not allowed"
    if action >= ACTION_TURNED:
        return "variant action not allowed"
    if not g.hands[g.to_act] >> action & 1:
        return "card not in hand"
    return "not following suit"


def bad_actions(env, rng: random.Random) -> list[tuple[str, Any]]:
    """One bad action of every kind for the agent to act."""
    raw = env.unwrapped
    mask = raw.observe(raw.agent_selection)["action_mask"]
    size = len(mask)
    illegal = np.flatnonzero(mask == 0)
    legal = np.flatnonzero(mask)
    a_legal = int(legal[rng.randrange(len(legal))])
    out = []
    if len(illegal):
        out.append(("masked", int(illegal[rng.randrange(len(illegal))])))
    out += [
        ("too_large", size + rng.randrange(100)),
        ("negative", -1 - rng.randrange(100)),
        ("float", float(a_legal)),
        ("numpy_float", np.float32(a_legal)),
        ("str", str(a_legal)),
        ("none_for_live_agent", None),
        ("bool", bool(a_legal % 2)),
        ("numpy_bool", np.bool_(True)),
        ("array", np.array([a_legal])),
        ("list", [a_legal]),
        ("huge_int", 2**70),
    ]
    return out


# ------------------------------------------------------------------ policies
def random_policy(raw, legal: list[int], rng: random.Random) -> int:
    return legal[rng.randrange(len(legal))]


def stalling_policy(raw, legal: list[int], rng: random.Random) -> int:
    """Adversarial play that tries never to end a deal (Rang) or knocks at every chance (RING RANG).

    Rang: never play the last card (or a Joker that leaves one card) while another legal
    action exists; after a draw, discard a card that could be played on the top (Jokers
    and Aces first), so the hand stays unplayable and nobody has to play; when a play is
    forced, play a card on which the rest of the own hand cannot follow. If every player
    does this, the top card never changes and the deal cycles until ``max_turns_per_deal``.
    RING RANG: knock, declare and signal whenever allowed, else a random card.
    """
    g = raw.game
    if isinstance(g, RangGame):
        seat = g.current
        size = g.hand_size[seat]
        if g.phase == DISCARD:
            playable = g.hand_bits[seat] & PLAYABLE_ON[g.top]
            for kind in (JOKER_KIND, ACE_KIND, *range(ACE_KIND)):
                if playable >> kind & 1:
                    return DISCARD_OFFSET + kind
            return legal[rng.randrange(len(legal))]
        safe = [a for a in legal if not (size == 1 or (a == JOKER_KIND and size == 2 and g.phase != PLAY_AFTER_JOKER))]
        pool = safe or legal
        blocking = [a for a in pool if not (g.hand_bits[seat] & ~(1 << a) & PLAYABLE_ON[a])]
        pool = blocking or pool
        return pool[rng.randrange(len(pool))]
    for action in (ACTION_KNOCK, ACTION_DECLARE):
        if action in legal:
            return action
    turned = [a for a in legal if ACTION_TURNED <= a < ACTION_DECLARE]
    pool = turned or legal
    return pool[rng.randrange(len(pool))]


POLICIES = {"random": random_policy, "stall": stalling_policy}


# ------------------------------------------------------------------ invariants
def check_state(game: str, raw, context: str, stats: Stats) -> None:
    """Card conservation and the mask/engine agreement, at any moment."""
    g = raw.game
    if game == "rang":
        cards = [c for s in range(g.num_players) for c in g.hand_cards(s)] + g.stock + g.discard + g.pile
        if Counter(cards) != Counter(DECK_108 if g.deck_size == 108 else DECK_54):
            stats.fail(f"{context}: Rang cards not conserved")
        engine_legal = g.legal_actions()
    else:
        seen = 0
        for hand in g.hands:
            if seen & hand:
                stats.fail(f"{context}: a card in two hands")
            seen |= hand
        if g.phase != PHASE_TRUMP and (seen & g.played or seen | g.played != (1 << 52) - 1):
            stats.fail(f"{context}: RING RANG cards not conserved")
        if sum(g.lifted) + g.pile != g.tricks_played:
            stats.fail(f"{context}: lifted + pile != tricks played")
        engine_legal = g.legal_actions()
    agent = raw.agent_selection
    live = agent in raw.terminations and not (raw.terminations[agent] or raw.truncations[agent])
    mask = raw.observe(agent)["action_mask"] if agent in raw.terminations else None
    if live and sorted(np.flatnonzero(mask).tolist()) != sorted(engine_legal):
        stats.fail(f"{context}: env mask differs from engine legal actions")


def check_end(game: str, raw, totals: dict[str, float], context: str, stats: Stats) -> None:
    """The rewards collected through env.last() match the rules for the finished episode."""
    g = raw.game
    n = raw.num_players
    names = raw.possible_agents
    if raw.agents:
        stats.fail(f"{context}: agents left after the end: {raw.agents}")
    if game == "rang":
        if g.truncated:
            stats.truncated += 1
            loss = -1.0 / (n - 1)
            for seat, name in enumerate(names):
                want = 0.0 if (raw.episode == "deal" or g.alive[seat]) else loss
                if abs(totals[name] - want) > 1e-9:
                    stats.fail(f"{context}: truncated Rang: {name} got {totals[name]}, expected {want}")
            return
        if raw.episode == "deal":
            want = [-p / 100 for p in g.last_points]
            if g.last_points[g.went_out] != 0:
                stats.fail(f"{context}: the player who went out scored")
        else:
            if sum(g.alive) != 1:
                stats.fail(f"{context}: match over with {sum(g.alive)} players in")
            want = [1.0 if g.alive[s] else -1.0 / (n - 1) for s in range(n)]
        got = [totals[name] for name in names]
        if not np.allclose(got, want):
            stats.fail(f"{context}: Rang rewards {got} != {want}")
        return
    if not g.over:
        stats.fail(f"{context}: RING RANG episode ended but the game is not over")
        return
    team = g.winner_team
    sign = [1.0 if s % 2 == team else -1.0 for s in range(4)]
    last = g.rounds[-1]
    if raw.unwrapped.game.episode == "round":
        want = [sign[s] * last["points"] for s in range(4)]
    else:
        if g.scores[team] < 20 or g.scores[1 - team] >= 20:
            stats.fail(f"{context}: game over with scores {g.scores}")
        shaped = [0.0] * 4
        for r in g.rounds[:-1]:
            for s in range(4):
                shaped[s] += (1.0 if s % 2 == r["winner_team"] else -1.0) * r["points"] * g.shaping
        want = [shaped[s] + sign[s] for s in range(4)]
    got = [totals[name] for name in names]
    if not np.allclose(got, want):
        stats.fail(f"{context}: RING RANG rewards {got} != {want}")
    if abs(got[0] + got[1]) > 1e-9:
        stats.fail(f"{context}: RING RANG rewards not zero-sum: {got}")


# ------------------------------------------------------------------ options
def random_deck(game: str, size: int, rng: random.Random) -> list[str]:
    cards = list(range(52)) if game == "ring_rang" else list(DECK_108 if size == 108 else DECK_54)
    rng.shuffle(cards)
    return [CODES[c] for c in cards]


def good_options(game: str, num_players: int, rng: random.Random) -> dict[str, Any] | None:
    """Valid (sometimes odd) reset options: given decks, dealer/chooser as numpy ints, empty deck lists."""
    choice = rng.randrange(6)
    if choice == 0:
        return None
    if game == "rang":
        size = 108 if num_players >= 5 else 54
        if choice == 1:
            return {"deck": random_deck(game, size, rng), "dealer": np.int64(rng.randrange(num_players))}
        if choice == 2:
            sizes = [size] + ([54] if size == 108 else [])
            return {"decks": [random_deck(game, s, rng) for s in sizes], "dealer": rng.randrange(num_players)}
        if choice == 3:
            return {"decks": []}
        if choice == 4:
            return {"options": 1}  # PettingZoo's api_test passes this
        return {"dealer": rng.randrange(num_players)}
    if choice == 1:
        return {"deck": random_deck(game, 52, rng), "chooser": rng.randrange(4)}
    if choice == 2:
        return {"decks": [random_deck(game, 52, rng) for _ in range(rng.randrange(3))], "dealer": np.int8(2)}
    if choice == 3:
        return {"decks": [], "chooser": None}
    if choice == 4:
        dealer = rng.randrange(4)
        return {"dealer": dealer, "chooser": (dealer + 1) % 4}
    return {"chooser": rng.randrange(4)}


def wrong_cards(deck: list[str]) -> list[str]:
    """``deck`` with its last card replaced by another code: a duplicate, and never the same multiset
    (``deck[:-1] + [deck[0]]`` was, when both ends held one of a Rang deck's repeated cards)."""
    return deck[:-1] + [next(code for code in deck if code != deck[-1])]


def bad_options(game: str, num_players: int, rng: random.Random) -> list[tuple[str, Any]]:
    """Malformed reset options (each must be a ValueError that changes nothing)."""
    n = num_players if game == "rang" else 4
    size = 52 if game == "ring_rang" else (108 if n >= 5 else 54)
    deck = random_deck(game, size, rng)
    dup = wrong_cards(deck)
    out = [
        ("options not a dict", [1]),
        ("unknown key", {"colour": 1}),
        ("deck wrong size", {"deck": deck[:-1]}),
        ("deck too long", {"deck": deck + deck[:1]}),
        ("deck duplicate", {"deck": dup}),
        ("deck unknown code", {"deck": deck[:-1] + ["XX"]}),
        ("deck a string", {"deck": " ".join(deck)}),
        ("deck None", {"deck": None}),
        ("deck of floats", {"deck": [float(i) for i in range(size)]}),
        ("deck and decks", {"deck": deck, "decks": [deck]}),
        ("decks a string", {"decks": "2C"}),
        ("decks with an empty deck", {"decks": [[]]}),
        ("decks with a bad deck", {"decks": [deck, dup]}),
        ("dealer out of range", {"dealer": n}),
        ("dealer negative", {"dealer": -1}),
        ("dealer a string", {"dealer": "1"}),
        ("dealer a float", {"dealer": 1.0}),
        ("dealer a bool", {"dealer": True}),
        ("dealer None", {"dealer": None}),
    ]
    if game == "rang":
        out += [
            ("108 deck for 4 players" if n <= 4 else "54 deck for 5+ players",
             {"deck": random_deck(game, 108 if n <= 4 else 54, rng)}),
            ("chooser in Rang", {"chooser": 0}),
            ("decks with a 108-card deck of wrong cards", {"decks": [wrong_cards(random_deck(game, 108, rng))]}),
        ]  # fmt: skip
    else:
        out += [
            ("54-card deck", {"deck": random_deck("rang", 54, rng)}),
            ("chooser out of range", {"chooser": 4}),
            ("chooser a string", {"chooser": "0"}),
            ("chooser a float", {"chooser": 0.0}),
            ("chooser a bool", {"chooser": False}),
            ("chooser and dealer disagree", {"chooser": 0, "dealer": 0}),
        ]
    return out


BAD_SEEDS = (1.5, "7", -3, b"x", [1, -2], {"seed": 1}, float("nan"), np.random.default_rng(1), np.random.MT19937(1))


def fuzz_options(game: str, rng: random.Random, stats: Stats, rounds: int = 1) -> None:
    """Bad reset options and seeds on an env in mid-game: each rejected, nothing changed."""
    for _ in range(rounds):
        n = rng.randrange(2, 11) if game == "rang" else 4
        kwargs = {"num_players": n} if game == "rang" else {}
        env = make_env(game, rng.random() < 0.5, **kwargs)
        env.reset(seed=rng.randrange(2**32))
        play(env, rng.randrange(30), rng, random_policy)
        for kind, options in bad_options(game, n, rng):
            expect_rejected(env, lambda e=env, o=options: e.reset(seed=1, options=o), f"option: {kind}", stats, game)
        for seed in BAD_SEEDS:
            expect_rejected(env, lambda e=env, s=seed: e.reset(seed=s), "seed", stats, game)


BAD_CONSTRUCTORS = {
    "rang": [
        {"num_players": 1}, {"num_players": 11}, {"num_players": "4"}, {"num_players": 4.0},
        {"num_players": True}, {"num_players": None}, {"episode": "game"}, {"episode": "round"},
        {"episode": None}, {"max_turns_per_deal": 0}, {"max_turns_per_deal": -5}, {"max_turns_per_deal": 2.5},
        {"max_turns_per_deal": "10"}, {"max_turns_per_deal": 2**63}, {"render_mode": "video"},
        {"illegal_action": "ignore"},
    ],
    "ring_rang": [
        {"episode": "match"}, {"episode": "deal"}, {"episode": None}, {"knocking": "yes"}, {"knocking": 1},
        {"signals": None}, {"declarations": "no"}, {"stop_when_decided": 0}, {"shaping": float("nan")},
        {"shaping": "0.1"}, {"shaping": True}, {"shaping": 1e308}, {"render_mode": "video"},
        {"illegal_action": "ignore"},
        {"num_players": 4},
    ],
}  # fmt: skip


def fuzz_constructors(game: str, stats: Stats) -> None:
    """Odd constructor arguments: each a ValueError (or TypeError for an unknown keyword)."""
    for kwargs in BAD_CONSTRUCTORS[game]:
        for wrapped in (True, False):
            try:
                make_env(game, wrapped, **kwargs)
            except (ValueError, TypeError):
                pass
            except Exception as error:  # noqa: BLE001
                stats.fail(f"{game} constructor {kwargs}: {type(error).__name__}: {error}")
            else:
                stats.fail(f"{game} constructor {kwargs}: accepted")
            stats.bad_calls += 1
            stats.bad_by_kind["constructor"] += 1


# ------------------------------------------------------------------ episodes
def play(env, steps: int, rng: random.Random, policy) -> None:
    """Up to ``steps`` legal steps (dead steps included)."""
    for _ in range(steps):
        if not env.agents:
            return
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
        else:
            env.step(policy(env.unwrapped, env.unwrapped.legal_actions(), rng))


def random_settings(game: str, num_players: int, rng: random.Random, short: bool = False) -> dict[str, Any]:
    """Constructor settings; ``short`` asks for one-deal / one-round episodes (fast suite runs)."""
    if game == "rang":
        return {
            "num_players": num_players,
            "episode": "deal" if short else rng.choice(["match", "deal"]),
            "max_turns_per_deal": rng.choice([300, 60, 25] if short else [2000, 2000, 300, 25]),
        }
    variants = rng.random() < 0.3
    return {
        "episode": "round" if short else rng.choice(["game", "round", "round"]),
        "knocking": rng.random() < 0.8,
        "signals": variants and rng.random() < 0.5,
        "declarations": variants,
        "stop_when_decided": rng.random() < 0.3,
        "shaping": rng.choice([0.0, 0.0, 0.25]),
    }


def fuzz_episode(
    game: str,
    wrapped: bool,
    seed: int,
    num_players: int,
    bad_rate: float,
    stats: Stats,
    max_steps: int = 20_000,
    policy: str | None = None,
    short: bool = False,
) -> None:
    """One fuzzed episode (possibly several games, with mid-game resets); findings go to ``stats``."""
    rng = random.Random(seed)
    settings = random_settings(game, num_players, rng, short)
    context = f"{game} {'env' if wrapped else 'raw_env'} seed={seed} {settings}"
    policy_fn = POLICIES[policy or rng.choice(list(POLICIES))]
    try:
        env = make_env(game, wrapped, **settings)
        env.reset(seed=rng.randrange(2**32), options=good_options(game, num_players, rng))
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for step in range(max_steps):
            if not env.agents:
                break
            raw = env.unwrapped
            agent = env.agent_selection
            obs, reward, term, trunc, _ = env.last()
            totals[agent] += reward
            dead = term or trunc
            if not dead and rng.random() < bad_rate:
                kind, action = rng.choice(bad_actions(env, rng))
                if kind == "masked":
                    stats.masked_reasons[f"{game}: {masked_reason(game, raw, action)}"] += 1
                expect_rejected(env, lambda a=action: env.step(a), kind, stats, f"{context} step {step}")
            if dead and rng.random() < bad_rate:
                expect_rejected(env, lambda: env.step(0), "action_for_dead_agent", stats, context)
            if rng.random() < 0.002:  # reset mid-game, with or without seed and options
                seed_now = rng.choice([None, rng.randrange(2**32)])
                env.reset(seed=seed_now, options=good_options(game, num_players, rng))
                totals = dict.fromkeys(env.possible_agents, 0.0)
                stats.resets_mid_game += 1
                continue
            if rng.random() < 0.01:  # a snapshot round trip changes nothing
                before = fingerprint(env)
                raw.restore(json.loads(json.dumps(raw.snapshot())))
                if fingerprint(env) != before:
                    stats.fail(f"{context} step {step}: restore(snapshot()) changed the env")
                stats.copies += 1
            if dead:
                env.step(None)
            else:
                env.step(policy_fn(raw, np.flatnonzero(obs["action_mask"]).tolist(), rng))
                stats.steps += 1
            if step % 7 == 0:
                check_state(game, raw, f"{context} step {step}", stats)
        else:
            return  # step budget spent: not a finished episode
        check_state(game, env.unwrapped, context, stats)
        check_end(game, env.unwrapped, totals, context, stats)
        stats.games += 1
        if rng.random() < 0.5:  # steps after the end: raise (raw) or PettingZoo's warning (wrapped)
            before = fingerprint(env)
            try:
                env.step(None)
            except ValueError:
                pass
            if fingerprint(env) != before:
                stats.fail(f"{context}: a step after the end changed the env")
            stats.bad_calls += 1
            stats.bad_by_kind["step_after_end"] += 1
    except Exception as error:  # noqa: BLE001 - a crash is a finding, with its traceback
        stats.fail(f"{context}: crash {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}")


# ------------------------------------------------------------------ traces (used by the tests)
def trace_random_play(env, seed: int) -> list[tuple]:
    """Play to the end with a seeded random policy; return every (agent, action, reward, flags, obs, mask)."""
    return record_random_play(env, seed)[1]


def record_random_play(env, seed: int) -> tuple[list[int | None], list[tuple]]:
    rng = random.Random(seed)
    actions: list[int | None] = []
    trace = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        action = None
        if not (term or trunc):
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        trace.append((agent, action, reward, term, trunc, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        actions.append(action)
        env.step(action)
    return actions, trace


def replay_actions(env, actions: list[int | None]) -> list[tuple]:
    """Replay an action log on an env reset with the same seed and options; return the same trace."""
    trace = []
    for action in actions:
        agent = env.agent_selection
        obs, reward, term, trunc, _ = env.last()
        trace.append((agent, action, reward, term, trunc, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        env.step(action)
    return trace


# ------------------------------------------------------------------ the long run
def fuzz_snapshots(game: str, rng: random.Random, stats: Stats) -> None:
    """Random corruptions of a real snapshot: each rejected with ValueError, nothing changed."""
    n = rng.randrange(2, 11) if game == "rang" else 4
    env = make_env(game, False, **({"num_players": n} if game == "rang" else {}))
    env.reset(seed=rng.randrange(2**32))
    play(env, rng.randrange(60), rng, random_policy)
    if not env.agents:
        return
    snap = env.unwrapped.snapshot()
    for _ in range(20):
        bad = copy.deepcopy(snap)
        path = corrupt(bad, rng)
        if path is None:
            continue
        before = fingerprint(env)
        try:
            env.unwrapped.restore(bad)
        except ValueError:
            stats.bad_calls += 1
            stats.bad_by_kind["malformed_snapshot"] += 1
        except Exception as error:  # noqa: BLE001
            stats.fail(f"{game} restore with {path}: {type(error).__name__}: {error}")
        else:
            # some corruptions give another valid state (a reward of 0 instead of 0.0): it must be playable
            try:
                play(env, 200, rng, random_policy)
                env.unwrapped.restore(snap)
            except Exception as error:  # noqa: BLE001
                stats.fail(f"{game} restore with {path} accepted, then {type(error).__name__}: {error}")
            continue
        if fingerprint(env) != before:
            stats.fail(f"{game} rejected restore with {path} changed the env")


# In-range values (0..3) too: an edit that stays in range must still be rejected unless it is a state in kind.
CORRUPT_VALUES = (None, -1, 0, 1, 2, 3, 99, 2**60, 1.5, "x", "QH", True, False, [], {}, [0], [[]], float("inf"))


def corrupt(snap: dict, rng: random.Random) -> str | None:
    """Replace or delete one random leaf or branch of a snapshot; return its path."""
    path = []
    node: Any = snap
    while isinstance(node, (dict, list)) and node and rng.random() < 0.75:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        if not isinstance(node[key], (dict, list)) or not node[key]:
            break
        path.append(key)
        node = node[key]
    if not isinstance(node, (dict, list)) or not node:
        return None
    key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
    path.append(key)
    if rng.random() < 0.2 and isinstance(node, dict):
        del node[key]
        return "/".join(map(str, path)) + " deleted"
    value = rng.choice(CORRUPT_VALUES)
    if value == node[key] and type(value) is type(node[key]):
        return None
    node[key] = value
    return "/".join(map(str, path)) + f" = {value!r}"


def fuzz_restore(game: str, rng: random.Random, stats: Stats) -> None:
    """Snapshots that are not this env's states: other settings, another bit generator, deep nesting."""
    n = rng.randrange(2, 11) if game == "rang" else 4
    settings = random_settings(game, n, rng)
    env = make_env(game, rng.random() < 0.5, **settings)
    env.reset(seed=rng.randrange(2**32))
    play(env, rng.randrange(40), rng, random_policy)
    if not env.agents:
        return
    other_settings = dict(settings)
    if game == "rang":
        key = rng.choice(["max_turns_per_deal", "episode", "num_players"])
        other_settings[key] = {"max_turns_per_deal": settings["max_turns_per_deal"] + 1,
                               "episode": "deal" if settings["episode"] == "match" else "match",
                               "num_players": n + 1 if n < 10 else 2}[key]  # fmt: skip
    else:
        key = rng.choice(["episode", "knocking", "signals", "declarations", "stop_when_decided", "shaping"])
        other_settings[key] = {"episode": "game" if settings["episode"] == "round" else "round",
                               "shaping": settings["shaping"] + 0.5}.get(key, not settings.get(key))  # fmt: skip
    other = make_env(game, False, **other_settings)
    other.reset(seed=rng.randrange(2**32))
    play(other, rng.randrange(40), rng, random_policy)
    snap = env.unwrapped.snapshot()
    bad_rng = dict(snap, rng=json.loads(json.dumps(np.random.MT19937(rng.randrange(99)).state,
                                                     default=lambda a: a.tolist())))  # fmt: skip
    deep: Any = []
    for _ in range(rng.choice([1_000, 50_000])):
        deep = [deep]
    nested = dict(snap, game=dict(snap["game"], **{rng.choice(list(snap["game"])): deep}))
    for kind, bad in (("restore: other settings", other.unwrapped.snapshot()), ("restore: MT19937 rng", bad_rng),
                      ("restore: deep nesting", nested)):  # fmt: skip
        expect_rejected(env, lambda b=bad: env.unwrapped.restore(b), kind, stats, f"{game} {settings}")


def fuzz_terminate(game: str, seed: int, stats: Stats) -> None:
    """``illegal_action="terminate"``: malformed actions raise as in the raising env; a masked action ends
    the episode with the penalty; restores in between (also of a penalised env) keep the mask current."""
    rng = random.Random(seed)
    n = rng.randrange(2, 11)
    settings = random_settings(game, n, rng, short=True)
    context = f"{game} terminate seed={seed} {settings}"
    try:
        env = make_env(game, True, illegal_action="terminate", **settings)
        env.reset(seed=rng.randrange(2**32))
        saved = [env.unwrapped.snapshot()]
        for step in range(400):
            if not env.agents:
                break
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if rng.random() < 0.2:
                kind, action = rng.choice([b for b in bad_actions(env, rng) if b[0] != "masked"])
                expect_rejected(env, lambda a=action: env.step(a), f"terminate: {kind}", stats, f"{context} {step}")
            if rng.random() < 0.05:  # back to an earlier state: its mask, not the stale one, judges the next step
                env.restore(json.loads(json.dumps(rng.choice(saved))))
                stats.copies += 1
                if not env.agents or env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                    continue
            legal = env.unwrapped.legal_actions()
            if rng.random() < 0.03:
                masked = [a for a in range(len(env.unwrapped.action_names)) if a not in legal]
                agent = env.agent_selection
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    env.step(rng.choice(masked))
                raw = env.unwrapped
                if not all(raw.terminations.values()) or raw._cumulative_rewards[agent] != -1.0:
                    stats.fail(f"{context} step {step}: masked action not penalised: {raw._cumulative_rewards}")
                before = fingerprint(env)
                raw.restore(json.loads(json.dumps(raw.snapshot())))  # a penalised env restores
                if fingerprint(env) != before:
                    stats.fail(f"{context} step {step}: restore of a penalised env changed it")
                stats.bad_by_kind["terminate: masked action penalised"] += 1
                saved.append(raw.snapshot())
                continue
            env.step(policy_choice(legal, rng))
            if env.agents and any(env.terminations.values()) and env.unwrapped._illegal_end is not None:
                stats.fail(f"{context} step {step}: a legal action was penalised")
            stats.steps += 1
            if rng.random() < 0.1:
                saved.append(env.unwrapped.snapshot())
    except Exception as error:  # noqa: BLE001
        stats.fail(f"{context}: crash {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}")


def policy_choice(legal: list[int], rng: random.Random) -> int:
    return legal[rng.randrange(len(legal))]


def gym_state(env) -> tuple:
    """What a rejected gym step must not change: the AEC snapshot and the learner's books."""
    return json.dumps(env.aec.unwrapped.snapshot()), tuple(env._banked), env._credited, env._mask.tobytes()


def fuzz_gym(game: str, seed: int, stats: Stats) -> None:
    """The gymnasium envs: malformed and aliasing actions are ValueErrors that change nothing; bad
    learner seats are refused; every reset reaches a learner decision; rewards are finite."""
    from cardenvs.gym_envs import CardGymEnv

    rng = random.Random(seed)
    n = rng.randrange(2, 11) if game == "rang" else 4
    mode = rng.choice(["raise", "terminate"])
    kwargs: dict[str, Any] = {"num_players": n} if game == "rang" else {}
    if game == "rang":
        kwargs["max_turns_per_deal"] = rng.choice([2000, 300, 3 * n])
    context = f"{game} gym seed={seed} {mode} {kwargs}"
    try:
        env = CardGymEnv(game, rng.choice(["random", "rules_basic"]), illegal_action=mode, **kwargs)
        for _ in range(3):
            bad_seat = rng.choice([-1, n, 1.0, True, "0"])
            try:
                env.reset(seed=rng.randrange(2**32), options={"learner_seat": bad_seat})
            except ValueError:
                stats.bad_by_kind["gym: bad learner_seat"] += 1
                stats.bad_calls += 1
            else:
                stats.fail(f"{context}: learner_seat {bad_seat!r} accepted")
            options = {"learner_seat": rng.randrange(n)} if rng.random() < 0.5 else None
            env.reset(seed=rng.randrange(2**32), options=options)
            for step in range(300):
                mask = env.action_masks()
                legal = np.flatnonzero(mask)
                if not len(legal):
                    stats.fail(f"{context}: no legal action at a learner decision")
                    break
                size = env.action_space.n
                if rng.random() < 0.3:
                    bad = rng.choice([int(legal[rng.randrange(len(legal))]) - size, size, size + 7, 2**63, None,
                                      float(legal[0]) + 0.5, str(legal[0]), True, np.float32(legal[0]), [1]])
                    expect_rejected(env, lambda bad=bad: env.step(bad), "gym: malformed or aliasing action", stats,
                                    f"{context} {step}: {bad!r}", state=gym_state)
                if mode == "terminate" and rng.random() < 0.02 and (~mask).any():
                    _, reward, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(~mask))))
                    if not (done and reward == -1.0 and info.get("illegal_action")):
                        stats.fail(f"{context} {step}: masked action not penalised")
                    stats.bad_by_kind["gym: masked action penalised"] += 1
                    break
                _, reward, done, trunc, _ = env.step(np.int64(legal[rng.randrange(len(legal))]))
                stats.steps += 1
                if not np.isfinite(reward):
                    stats.fail(f"{context} {step}: reward {reward}")
                if done or trunc:
                    stats.gym_episodes += 1
                    break
    except Exception as error:  # noqa: BLE001
        stats.fail(f"{context}: crash {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}")


# ------------------------------------------------------------------ the apps and crafted inputs (issue 34)
SERVE_STATUSES = {200, 400, 403, 404, 405, 409}  # never a 500, never an empty reply


def _hidden_hands_shown(view: dict[str, Any], seat: int) -> bool:
    return any(s.get("cards") is not None for i, s in enumerate(view["seats"]) if i != seat)


def fuzz_play(game: str, rng: random.Random, stats: Stats, folder: str) -> dict[str, Any] | None:
    """``cardenvs play`` through a game (or until ``q``) with typed input that is often wrong: numbers out of
    range, card codes, garbage, control characters. It must finish (exit 0), show no seed before its last
    line, and save a record that replays. Returns the record."""
    import contextlib
    import io
    from pathlib import Path

    from cardenvs.play import main as play_main
    from cardenvs.replay import load, replay

    seed = rng.randrange(10**8, 10**9)  # nine digits: in no output by chance
    path = Path(folder) / f"play_{game}_{seed}.json"
    n = rng.randrange(2, 6)
    argv = [game, "--seed", str(seed), "--record", str(path), "--no-color", "--opponents", "random"]
    argv += ["--players", str(n), "--episode", "deal", "--seat", str(rng.randrange(n))] if game == "rang" else \
        ["--episode", "round", "--partner", "random", "--seat", str(rng.randrange(4))]  # fmt: skip
    junk = ["", " ", "0", "999", "-1", "1.5", "QH", "10d", "jk", "k", "x" * 300, "\x00", "\u2665", "1 2", "Q", "T"]
    quit_after = rng.choice([None, None, None, rng.randrange(1, 30)])
    asked = [0]

    def read(prompt: str) -> str:
        asked[0] += 1
        if quit_after is not None and asked[0] > quit_after:
            return "quit"
        stats.bad_by_kind["app: play inputs"] += 1
        return rng.choice(junk) if rng.random() < 0.3 else str(rng.randrange(1, 4))

    out = io.StringIO()
    context = f"play {' '.join(argv)}"
    try:
        with contextlib.redirect_stdout(out):
            code = play_main(argv, read=read)
    except Exception as error:  # noqa: BLE001
        stats.fail(f"{context}: crash {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}")
        return None
    text = out.getvalue()
    if code != 0:
        stats.fail(f"{context}: exit {code}")
        return None
    body, _, last = text.rpartition("=== seed of this game")
    if str(seed) in body or str(seed) not in last:
        stats.fail(f"{context}: the seed is shown before the end (or not at the end)")
    try:
        data = load(path)
        replay(data)
    except ValueError as error:
        stats.fail(f"{context}: the record does not replay: {error}")
        return None
    stats.app_games += 1
    return data


def fuzz_serve(game: str, rng: random.Random, stats: Stats, requests: int = 120) -> list[dict[str, Any]]:
    """``cardenvs serve`` over HTTP: legal moves among malformed bodies, wrong types, stale turns, wrong tokens,
    bad Host headers, unknown paths and methods, deep nesting, give-ups and new games. Every reply is one of
    :data:`SERVE_STATUSES` with a JSON body; the state never shows another hand, nor the seed before the end.
    Returns the records of the games that ended."""
    import http.client
    import threading

    from cardenvs.serve import App, WebGame, make_server

    n = rng.randrange(2, 6) if game == "rang" else 4
    env_kwargs = {"num_players": n, "episode": "deal"} if game == "rang" else {"episode": "round"}
    seat = rng.randrange(n)
    app = App(lambda s: WebGame(game, env_kwargs, seat, ["random"] * (n - 1), s))
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    records, state = [], None
    bodies = [b"", b"{", b"[]", b"null", b"\xff", b"[" * 3000, b'{"action": "1"}', b'{"action": 1.0}',
              b'{"action": true}', b'{"action": 99999999999999999999}', b'{"action": [1]}', b'{"turn": "x"}',
              b'{"action": null, "turn": null}', b'{"action": -1}', b"x" * 5000]  # fmt: skip
    try:
        for _ in range(requests):
            method, path, body = "GET", "/api/state", None
            headers = {"X-Cardenvs-Token": app.token, "Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}
            roll = rng.random()
            if state and state["finished"] and roll < 0.6:  # the record, then a new game
                method, path = ("GET", "/api/record") if roll < 0.4 else ("POST", "/api/new")
                body = None if method == "GET" else b"{}"
            elif state and state["moves"] and roll < 0.45:
                move = rng.choice(state["moves"])
                turn = state["turn"] if rng.random() < 0.9 else state["turn"] + rng.choice([-1, 1])
                method, path, body = "POST", "/api/move", json.dumps({"action": move["action"], "turn": turn}).encode()
            elif roll < 0.65:
                method, path, body = "POST", "/api/move", rng.choice(bodies)
            elif roll < 0.7:
                method, path, body = "POST", rng.choice(["/api/resign", "/api/new"]), b"{}"
            elif roll < 0.75:
                headers["X-Cardenvs-Token"] = rng.choice(["", "x", app.token[:-1]])
            elif roll < 0.8:
                headers["Host"] = rng.choice(["evil.example", f"rebound.test:{port}", "", "[::1", "a:b:c"])
            elif roll < 0.85:
                method, path = rng.choice(["GET", "POST", "PUT", "DELETE"]), rng.choice(
                    ["/api/nothing", "/api/record", "/../etc/passwd", "/api/state?token=" + "x" * 500, "/"])
                body = b"{}" if method != "GET" else None
            elif roll < 0.9:
                headers["Content-Type"] = rng.choice(["text/plain", "", "application/json; charset=latin-1"])
                method, path, body = "POST", "/api/move", b'{"action": 0}'
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                for key, value in headers.items():
                    connection.putheader(key, value)
                if body is not None:
                    connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                reply = connection.getresponse()
                status, text = reply.status, reply.read()
            except (OSError, http.client.HTTPException) as error:
                stats.fail(f"serve {game} {method} {path}: no reply ({type(error).__name__}: {error})")
                continue
            finally:
                connection.close()
            stats.app_requests += 1
            stats.bad_by_kind[f"app: serve {status}"] += 1
            if status not in SERVE_STATUSES:
                stats.fail(f"serve {game} {method} {path} {body!r:.60}: status {status}")
            if path == "/" and status == 200:
                continue
            try:
                data = json.loads(text)
            except ValueError:
                stats.fail(f"serve {game} {method} {path}: a reply that is not JSON: {text[:80]!r}")
                continue
            if status != 200:
                if "error" not in data:
                    stats.fail(f"serve {game} {method} {path}: error reply without a message")
                continue
            if path == "/api/record":
                records.append(data)
                continue
            state = data
            if _hidden_hands_shown(state["view"], seat):
                stats.fail(f"serve {game}: the state shows another hand")
            if not state["finished"] and state["seed"] is not None:
                stats.fail(f"serve {game}: the seed before the end")
            if state["finished"] and rng.random() < 0.5:
                state = None  # next: fetch the record or the state again
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    stats.app_games += len(records)
    return records


def fuzz_replay(record: dict[str, Any], rng: random.Random, stats: Stats, folder: str) -> None:
    """``cardenvs replay`` on a record and on crafted ones (random edits, deep nesting, huge numbers): exit 0,
    or exit 2 with one line naming the file; ``--observer`` output holds no seed and no other hand."""
    import contextlib
    import io
    from pathlib import Path

    from cardenvs.replay import main as replay_main

    path = Path(folder) / "fuzz_record.json"
    html = Path(folder) / "fuzz_record.html"
    crafted = copy.deepcopy(record)
    kind = rng.choice(["as recorded", "edited", "edited", "deep options", "huge seed", "deep actions"])
    text = None
    if kind == "edited":
        kind = f"edited {corrupt(crafted, rng)}"
    elif kind == "deep options":
        text = json.dumps(dict(crafted, options=None)).replace('"options": null',
                                                               '"options": {"a": ' + "[" * 3000 + "]" * 3000 + "}")
    elif kind == "huge seed":
        text = json.dumps(dict(crafted, seed=0)).replace('"seed": 0', '"seed": ' + "9" * rng.choice([40, 5000]))
    elif kind == "deep actions":
        text = json.dumps(dict(crafted, actions=[])).replace('"actions": []', '"actions": ' + "[" * 3000 + "]" * 3000)
    path.write_text(text if text is not None else json.dumps(crafted))
    seats = record["env_kwargs"].get("num_players", 4)
    observer = rng.randrange(seats)
    argv = [str(path), "--html", str(html), "--observer", str(observer)]
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = replay_main(argv)
    except Exception as error:  # noqa: BLE001
        stats.fail(f"replay ({kind}): crash {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}")
        return
    stats.bad_by_kind[f"app: replay {'accepted' if code == 0 else 'refused'}"] += 1
    if code == 2:
        message = err.getvalue()
        if message.count("\n") != 1 or not message.startswith("error: "):
            stats.fail(f"replay ({kind}): not a one-line error: {message[:200]!r}")
        return
    if code != 0:
        stats.fail(f"replay ({kind}): exit {code}")
        return
    page = html.read_text(encoding="utf-8")
    seed = str(crafted.get("seed"))
    if len(seed) >= 7 and (seed in page or seed in out.getvalue()):
        stats.fail(f"replay --observer ({kind}): the seed is shown")
    frames = json.loads(page.split('<script id="frames" type="application/json">', 1)[1].split("</script>", 1)[0]
                        .replace("<\\/", "</"))  # fmt: skip
    if any(_hidden_hands_shown(frame["view"], observer) for frame in frames):
        stats.fail(f"replay --observer ({kind}): another hand is shown")


def fuzz_apps(game: str, rng: random.Random, stats: Stats) -> None:
    """One round of the apps: play, serve, and replay of what they recorded."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        records = fuzz_serve(game, rng, stats)
        played = fuzz_play(game, rng, stats, folder)
        for record in [r for r in (played, *records) if r is not None]:
            for _ in range(3):
                fuzz_replay(record, rng, stats, folder)


def _crafted(kind: str, call: Callable[[], Any], stats: Stats, after: Callable[[Any], None] | None = None) -> None:
    """``call`` with a crafted input: a ValueError, or (accepted) a result ``after`` can use without error."""
    try:
        result = call()
    except ValueError:
        stats.bad_by_kind[f"crafted {kind}: refused"] += 1
        return
    except Exception as error:  # noqa: BLE001
        stats.fail(f"crafted {kind}: {type(error).__name__} instead of ValueError: {error}")
        return
    stats.bad_by_kind[f"crafted {kind}: accepted"] += 1
    if after is not None:
        try:
            after(result)
        except Exception as error:  # noqa: BLE001
            stats.fail(f"crafted {kind}: accepted, then {type(error).__name__}: {error}")


def fuzz_policies(game: str, rng: random.Random, stats: Stats) -> None:
    """Crafted ``.npz`` policies (names, shapes, dtypes, values edited): refused at load, or they play."""
    import tempfile
    from pathlib import Path

    from cardenvs.agents.policy import load_policy, save_policy, trained_path
    from cardenvs.agents.registry import make_agent

    weights = load_policy(trained_path(game))
    env_info = {"num_players": 4} if game == "rang" else {}
    for _ in range(4):
        edited = dict(weights)
        key = rng.choice(sorted(edited))
        how = rng.choice(["drop", "rename", "transpose", "slice", "strings", "ints", "nan", "extra", "scalar",
                          "float64", "grow"])
        value = np.asarray(edited[key])
        if how == "drop":
            del edited[key]
        elif how == "rename":
            edited[key.replace("0", "7").replace("action", "hidden9") or "x"] = edited.pop(key)
        elif how == "transpose" and value.ndim == 2:
            edited[key] = value.T
        elif how == "slice" and value.ndim >= 1:
            edited[key] = value[: rng.randrange(max(value.shape[0], 1))]
        elif how == "strings":
            edited[key] = value.astype(str)
        elif how == "ints" and value.dtype.kind == "f":
            edited[key] = value.astype(np.int64)
        elif how == "nan" and value.dtype.kind == "f":
            edited[key] = np.where(np.arange(value.size).reshape(value.shape) == 0, np.nan, value)
        elif how == "extra":
            edited["extra/weight"] = np.zeros(3, np.float32)
        elif how == "scalar":
            edited[key] = np.float32(1)
        elif how == "float64" and value.dtype.kind == "f":
            edited[key] = value.astype(np.float64)
        elif how == "grow" and value.ndim >= 1:
            edited[key] = np.concatenate([value, value[:1]])
        with tempfile.TemporaryDirectory() as folder:
            path = save_policy(edited, Path(folder) / "crafted.npz")

            def plays(agent: Any) -> None:
                env = make_env(game, True, **env_info)
                env.reset(seed=rng.randrange(2**32))
                for _ in range(30):
                    if not env.agents:
                        return
                    if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                        env.step(None)
                        continue
                    env.step(agent.act(env.observe(env.agent_selection)))  # an illegal action raises here

            _crafted(f"policy ({how})", lambda p=path: make_agent(f"policy:path={p}", game, seed=0, **env_info),
                     stats, plays)


CONFIG_VALUES = (None, -1, 0, 1, 0.5, -5.0, 1e308, float("nan"), "x", "", True, [], {}, [1], {"a": 1}, "rang",
                 "ring_rang", [[[[]]]], {"colour": "red"}, 2**70)


def fuzz_configs(rng: random.Random, stats: Stats) -> None:
    """Crafted train configs (a valid one with one field set to an odd value, unknown fields, aliases, deep
    nesting, empty files): a one-line ValueError, or a config that validates. No run is started."""
    import tempfile
    from dataclasses import fields
    from pathlib import Path

    import yaml

    from cardenvs.train.config_files import load_config
    from cardenvs.train.selfplay import TrainConfig
    from cardenvs.train.vector_ppo import VectorPPOConfig

    schema = rng.choice([TrainConfig, VectorPPOConfig])
    data: dict[str, Any] = {"game": rng.choice(["rang", "ring_rang"]), "run_dir": "runs/fuzz-never-written",
                            "total_steps": 100, "eval_opponents": ["random"]}
    name = rng.choice([f.name for f in fields(schema)] + ["unknown_field"])
    data[name] = rng.choice(CONFIG_VALUES)
    text = yaml.safe_dump(data) if not (isinstance(data[name], float) and data[name] != data[name]) else \
        yaml.safe_dump(dict(data, **{name: 0})).replace(f"{name}: 0", f"{name}: .nan")  # fmt: skip
    special = rng.random()
    if special < 0.05:
        text = ""
    elif special < 0.1:
        text = "game: rang\nrun_dir: x\nenv_kwargs:\n  a: &a [1, 1]\n  b: [*a, *a]\n"
    elif special < 0.15:
        text = "game: rang\nenv_kwargs: " + "[" * rng.choice([30, 5000]) + "]" * 5000
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(text)
        _crafted(f"config {schema.__name__}", lambda: load_config(path, schema), stats,
                 lambda config: config.validate())
    if Path("runs/fuzz-never-written").exists():
        stats.fail("a crafted config created its run folder")


def fuzz_batched_states(game: str, rng: random.Random, stats: Stats) -> None:
    """A batched env's state with one value of one game changed: refused (nothing changed), or it steps on."""
    import torch

    from cardenvs.games import game_spec

    spec = game_spec(game)
    n = rng.randrange(2, 7) if game == "rang" else 4
    make = spec.vector_env_class()
    kwargs = {"num_players": n, "episode": rng.choice(["deal", "match"])} if game == "rang" else \
        {"episode": rng.choice(["round", "game"])}  # fmt: skip
    env = make(4, seed=rng.randrange(2**32), **kwargs)
    out = env.reset()
    generator = torch.Generator().manual_seed(rng.randrange(2**32))
    mask = out[1]
    for _ in range(rng.randrange(1, 120)):
        mask = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))[1]
    state = env.state_dict()
    names = [k for k, v in state.items() if isinstance(v, torch.Tensor) and v.dtype != torch.bool and v.numel()]
    name = rng.choice(names)
    tensor = state[name].clone()
    flat = tensor.view(-1)
    index = rng.randrange(flat.numel())
    flat[index] = rng.choice([-2, -1, 0, 1, 2, 3, 5, 9, 13, 51, 52, 99, 127])
    state[name] = tensor
    target = make(4, seed=1, **kwargs)
    target.reset()
    before = {k: v.clone() for k, v in target.state_dict().items() if isinstance(v, torch.Tensor)}

    def steps(_: Any) -> None:
        mask = target._mask if hasattr(target, "_mask") else None
        for _ in range(60):
            mask = target.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))[1]

    try:
        target.load_state_dict(state)
    except ValueError:
        stats.bad_by_kind[f"crafted batched {game} state: refused"] += 1
        after = target.state_dict()
        if any(not torch.equal(after[k], v) for k, v in before.items()):
            stats.fail(f"crafted batched {game} state ({name}[{index}]): refused, but the env changed")
        return
    except Exception as error:  # noqa: BLE001
        stats.fail(f"crafted batched {game} state ({name}[{index}]): {type(error).__name__}: {error}")
        return
    stats.bad_by_kind[f"crafted batched {game} state: accepted"] += 1
    try:
        steps(None)
    except Exception as error:  # noqa: BLE001
        stats.fail(f"crafted batched {game} state ({name}[{index}]) accepted, then {type(error).__name__}: {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="how long to fuzz")
    parser.add_argument("--seed", type=int, default=0, help="seed of the whole run (reproducible)")
    parser.add_argument("--bad-rate", type=float, default=0.3, help="chance of a bad call before each step")
    parser.add_argument("--no-apps", dest="apps", action="store_false",
                        help="skip the apps (play, serve, replay) and the crafted policies, configs and batched "
                             "states (they need the [train] extra)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    stats = Stats()
    start = time.monotonic()
    deadline = start + args.minutes * 60
    last_print = start
    episodes = 0
    while time.monotonic() < deadline:
        game = GAMES[episodes % 2]
        num_players = rng.randrange(2, 11)
        fuzz_episode(game, rng.random() < 0.5, rng.randrange(2**32), num_players, rng.random() * args.bad_rate * 2,
                     stats)  # fmt: skip
        for other in GAMES:  # both games, whatever the parity of ``episodes``
            if episodes % 20 == 0:
                fuzz_options(other, rng, stats)
                fuzz_snapshots(other, rng, stats)
            if episodes % 10 == 0:
                fuzz_restore(other, rng, stats)
                fuzz_terminate(other, rng.randrange(2**32), stats)
                fuzz_gym(other, rng.randrange(2**32), stats)
            if episodes % 200 == 0:
                fuzz_constructors(other, stats)
            if episodes % 40 == 0 and args.apps:
                fuzz_apps(other, rng, stats)
                fuzz_policies(other, rng, stats)
                fuzz_batched_states(other, rng, stats)
                fuzz_configs(rng, stats)
        episodes += 1
        now = time.monotonic()
        if now - last_print >= 5:
            last_print = now
            print(
                f"[{now - start:6.0f}s] games {stats.games}  steps {stats.steps}  bad calls {stats.bad_calls}  "
                f"truncated {stats.truncated}  failures {len(stats.failures)}",
                flush=True,
            )
    elapsed = time.monotonic() - start
    print(f"\nfuzz report (seed {args.seed}, {elapsed / 60:.1f} min)")
    print(f"  games finished and checked: {stats.games} (truncated by the turn limit: {stats.truncated})")
    print(f"  legal steps: {stats.steps}")
    print(f"  bad calls rejected and checked: {stats.bad_calls}")
    for kind, count in sorted(stats.bad_by_kind.items()):
        print(f"    {kind}: {count}")
    print("  masked actions by reason:")
    for reason, count in sorted(stats.masked_reasons.items()):
        print(f"    {reason}: {count}")
    print(f"  resets mid-game: {stats.resets_mid_game}, snapshot round trips and restores: {stats.copies}")
    print(f"  gym episodes finished: {stats.gym_episodes}")
    print(f"  app games (play, serve) played and replayed: {stats.app_games}; serve requests: {stats.app_requests}")
    print(f"  failures: {len(stats.failures)}")
    for failure in stats.failures[:10]:
        print("  - " + failure)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
