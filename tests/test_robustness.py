"""Robustness: nothing a caller does corrupts a game, and rejected calls change nothing.

Malformed snapshots, seeds, options and actions raise a clear ValueError (naming the
field) and leave the env exactly as it was; steps after the end raise or are the
PettingZoo dead step; random legal play interleaved with bad calls (hypothesis,
driven by the fuzzer of ``scripts/fuzz.py``) still ends every game correctly.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fuzz_script import fuzz
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError

MAKERS: dict[str, Callable[[], Any]] = {
    "ring_rang": lambda: ring_rang_v0.env(),
    "ring_rang_raw": lambda: ring_rang_v0.raw_env(episode="round"),
    "rang3": lambda: rang_v0.env(num_players=3),
    "rang6_raw": lambda: rang_v0.raw_env(num_players=6),
}


def _random_steps(env, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(steps):
        if not env.agents:
            return
        obs, _, term, trunc, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if term or trunc else int(legal[rng.randrange(len(legal))]))


def _fingerprint(env) -> str:
    """Everything observable of an env: its snapshot and every agent's observation."""
    raw = env.unwrapped
    views = [raw.observe(a)["observation"].tobytes().hex() for a in raw.possible_agents]
    return json.dumps([raw.snapshot(), views, raw.legal_actions()], sort_keys=True)


# ------------------------------------------------------------ malformed snapshots
def _mutations(game_name: str) -> dict[str, tuple[Callable[[dict], None], str]]:
    """Named corruptions of a snapshot, with a word the error message must contain."""

    def setter(path: tuple, value: Any) -> Callable[[dict], None]:
        def apply(snap: dict) -> None:
            target = snap
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value

        return apply

    def pop(path: tuple) -> Callable[[dict], None]:
        def apply(snap: dict) -> None:
            target = snap
            for key in path[:-1]:
                target = target[key]
            del target[path[-1]]

        return apply

    common = {
        "missing game": (pop(("game",)), "game"),
        "missing rng": (pop(("rng",)), "rng"),
        "missing agents": (pop(("agents",)), "agents"),
        "rng of unknown kind": (setter(("rng", "bit_generator"), "os"), "bit_generator"),
        "rng state garbage": (setter(("rng", "state"), 1), "rng"),
        "agents not a list": (setter(("agents",), "player_0"), "agents"),
        "unknown agent": (setter(("agents",), ["bob"]), "agents"),
        "duplicate agents": (setter(("agents",), ["player_0", "player_0"]), "agents"),
        "selection unknown": (setter(("agent_selection",), "player_9"), "agent_selection"),
        "selection not to act": (lambda s: s.__setitem__("agent_selection", _not_to_act(s)), "agent_selection"),
        "reward a string": (setter(("rewards", "player_0"), "x"), "rewards"),
        "reward nan": (setter(("cumulative_rewards", "player_0"), float("nan")), "cumulative_rewards"),
        "termination a string": (setter(("terminations", "player_0"), "no"), "terminations"),
        "a player in the game terminated": (lambda s: s["terminations"].__setitem__(_not_to_act(s), True), "live"),
        "a player in the game truncated": (lambda s: s["truncations"].__setitem__(_not_to_act(s), True), "live"),
        "a player in the game missing": (lambda s: _drop_agent(s, _not_to_act(s)), "live"),
        "truncations missing an agent": (lambda s: s["truncations"].pop("player_0"), "player_0"),
        "game a list": (setter(("game",), []), "game"),
    }
    if game_name.startswith("rang"):
        specific = {
            "card duplicated": (_duplicate_rang_card, "extra"),
            "unknown card code": (setter(("game", "hands", 0, 0), "ZZ"), "hands[0]"),
            "current out of range": (setter(("game", "current"), 7), "current"),
            "current a string": (setter(("game", "current"), "1"), "current"),
            "phase 5": (setter(("game", "phase"), 5), "phase"),
            "own_discards short": (setter(("game", "own_discards"), [[0]]), "own_discards"),
            "deck_size 53": (setter(("game", "deck_size"), 53), "deck_size"),
            "empty play pile": (setter(("game", "pile"), []), "pile"),
            "dealer out of range": (setter(("game", "dealer"), 11), "dealer"),
            "totals not ints": (setter(("game", "totals", 0), 1.5), "totals"),
            "match_over a string": (setter(("game", "match_over"), "no"), "match_over"),
            "missing stock": (pop(("game", "stock_top_first")), "stock_top_first"),
        }
    else:
        specific = {
            "card duplicated": (_duplicate_ring_rang_card, "hands"),
            "hand a string": (setter(("game", "hands", 0), "x"), "hands[0]"),
            "trump a letter": (setter(("game", "trump"), "H"), "trump"),
            "trump 9": (setter(("game", "trump"), 9), "trump"),
            "to_act a string": (setter(("game", "to_act"), "x"), "to_act"),
            "to_act wrong seat": (lambda s: s["game"].__setitem__("to_act", (s["game"]["to_act"] + 1) % 4), "to_act"),
            "next_honour 7": (setter(("game", "next_honour"), 7), "next_honour"),
            "deck short": (setter(("game", "deck"), [1, 2]), "deck"),
            "scores a string": (setter(("game", "scores"), "ab"), "scores"),
            "trick card out of range": (setter(("game", "trick_cards"), [99]), "trick_cards"),
            "history garbage": (setter(("game", "history"), [5]), "history"),
            "decks garbage": (setter(("game", "decks"), [[1]]), "decks[0]"),
            "missing lifted": (pop(("game", "lifted")), "lifted"),
        }
    return {**common, **specific}


def _not_to_act(snap: dict) -> str:
    agents = snap["agents"]
    return next(a for a in agents if a != snap["agent_selection"])


def _drop_agent(snap: dict, agent: str) -> None:
    snap["agents"].remove(agent)
    for key in ("rewards", "cumulative_rewards", "terminations", "truncations"):
        del snap[key][agent]


def _duplicate_rang_card(snap: dict) -> None:
    hands = snap["game"]["hands"]
    hands[0][0] = hands[1][0] if hands[1][0] != hands[0][0] else hands[1][1]


def _duplicate_ring_rang_card(snap: dict) -> None:
    hands = snap["game"]["hands"]
    hands[0] |= hands[1] & -hands[1]  # seat 1's lowest card also in seat 0's hand


@pytest.mark.parametrize("name", list(MAKERS))
def test_malformed_snapshots_raise_naming_the_field_and_change_nothing(name):
    env = MAKERS[name]()
    env.reset(seed=3)
    _random_steps(env, 37, seed=1)
    snap = env.unwrapped.snapshot()
    before = _fingerprint(env)
    mutations = _mutations(name)
    for label, (mutate, word) in mutations.items():
        bad = copy.deepcopy(snap)
        mutate(bad)
        for form in (bad, json.dumps(bad)):
            with pytest.raises(ValueError) as info:
                env.unwrapped.restore(form)
            assert word in str(info.value), f"{label}: {info.value}"
            assert _fingerprint(env) == before, label
    for garbage in (None, [], "{", "null", {"env": "other"}, 42):
        with pytest.raises(ValueError):
            env.unwrapped.restore(garbage)
        assert _fingerprint(env) == before
    # and the env still plays on from where it was
    env.unwrapped.restore(snap)
    assert _fingerprint(env) == before
    _random_steps(env, 50, seed=2)


@pytest.mark.parametrize("name", ["ring_rang", "rang3"])
def test_failed_restore_into_a_fresh_wrapped_env_still_needs_reset(name):
    env = MAKERS[name]()
    env.reset(seed=0)
    snap = env.unwrapped.snapshot()
    fresh = MAKERS[name]()
    bad = copy.deepcopy(snap)
    bad["agent_selection"] = "player_9"
    with pytest.raises(ValueError):
        fresh.restore(bad)
    with pytest.raises(Exception, match="reset"):  # OrderEnforcing: the failed restore did not count as a reset
        fresh.step(0)


# ----------------------------------------------------------- steps after the end
@pytest.mark.parametrize("name", list(MAKERS))
def test_steps_after_the_end_raise_or_are_dead_steps(name):
    env = MAKERS[name]()
    env.reset(seed=5)
    rng = random.Random(5)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            with pytest.raises(ValueError):  # a dead agent may only step None
                env.step(0)
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert env.agents == []
    final = env.unwrapped.snapshot()
    for action in (None, 0, 3):
        if env is env.unwrapped:  # raw env: a clear error
            with pytest.raises(IllegalActionError, match="reset"):
                env.step(action)
        else:  # wrapped: PettingZoo's warning, nothing happens
            env.step(action)
    assert env.unwrapped.snapshot() == final
    assert env.unwrapped.legal_actions() == []
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()
    env.reset(seed=5)  # and a reset starts a new game as usual
    assert len(env.agents) == env.num_agents > 0


# ----------------------------------------------------------------- bad seeds
@pytest.mark.parametrize("name", list(MAKERS))
def test_bad_seeds_raise_value_error_and_change_nothing(name):
    env = MAKERS[name]()
    env.reset(seed=1)
    _random_steps(env, 9, seed=0)
    before = _fingerprint(env)
    for seed in (1.5, "1", -1, b"x", [1, -2], {"a": 1}):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
        assert _fingerprint(env) == before


# --------------------------------------------------------------- deep copies
@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("how", ["snapshot", "json", "deepcopy", "pickle"])
def test_copies_continue_identically_at_any_point(name, how):
    """Copy a game at a random point, play both on with the same actions: same views, rewards, end."""
    for point in (0, 11, 63):
        env = MAKERS[name]()
        env.reset(seed=point)
        _random_steps(env, point, seed=point)
        if how == "snapshot":
            twin = MAKERS[name]()
            twin.restore(env.unwrapped.snapshot())
        elif how == "json":
            twin = MAKERS[name]()
            twin.restore(json.dumps(env.unwrapped.snapshot()))
        elif how == "deepcopy":
            twin = copy.deepcopy(env)
        else:
            twin = pickle.loads(pickle.dumps(env))
        a, b = fuzz.trace_random_play(env, seed=7), fuzz.trace_random_play(twin, seed=7)
        assert a == b
        assert env.unwrapped.snapshot() == twin.unwrapped.snapshot()


@pytest.mark.parametrize("name", list(MAKERS))
def test_replayed_action_log_reproduces_the_game_bit_for_bit(name):
    options = {"chooser": 2} if name.startswith("ring") else {"dealer": 1}
    env = MAKERS[name]()
    env.reset(seed=11, options=options)
    log, trace = fuzz.record_random_play(env, seed=4)
    final = env.unwrapped.snapshot()
    replay = MAKERS[name]()
    replay.reset(seed=11, options=options)
    assert fuzz.replay_actions(replay, log) == trace
    assert replay.unwrapped.snapshot() == final


# ------------------------------------------------- fuzzing: play with bad calls
GAME_ARGS = dict(
    game=st.sampled_from(fuzz.GAMES),
    wrapped=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    num_players=st.integers(2, 10),
    bad_rate=st.sampled_from([0.0, 0.2, 0.6]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**GAME_ARGS)
def test_fuzzed_deals_and_rounds_with_bad_calls_stay_consistent(game, wrapped, seed, num_players, bad_rate):
    stats = fuzz.Stats()
    fuzz.fuzz_episode(game, wrapped, seed, num_players, bad_rate, stats, max_steps=3000, short=True)
    assert stats.failures == [], stats.failures[:3]
    assert stats.games == 1


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**GAME_ARGS)
def test_fuzzed_matches_and_games_with_bad_calls_stay_consistent(game, wrapped, seed, num_players, bad_rate):
    stats = fuzz.Stats()
    fuzz.fuzz_episode(game, wrapped, seed, num_players, bad_rate, stats, max_steps=200_000)
    assert stats.failures == [], stats.failures[:3]
    assert stats.games == 1


def test_fuzz_covers_every_kind_of_bad_call():
    """A few fixed fuzz episodes try every kind of bad call the fuzzer knows, on both games."""
    stats = fuzz.Stats()
    for seed in range(6):
        for game in fuzz.GAMES:
            fuzz.fuzz_episode(game, seed % 2 == 0, seed, 2 + seed, 0.5, stats, max_steps=1500, short=True)
    assert stats.failures == [], stats.failures[:3]
    assert set(stats.bad_by_kind) >= set(fuzz.BAD_CALL_KINDS)


@pytest.mark.parametrize("game", fuzz.GAMES)
def test_bad_options_and_constructor_args_change_nothing(game):
    stats = fuzz.Stats()
    fuzz.fuzz_options(game, random.Random(0), stats, rounds=3)
    fuzz.fuzz_constructors(game, stats)
    assert stats.failures == [], stats.failures[:3]
    assert stats.bad_calls > 40
