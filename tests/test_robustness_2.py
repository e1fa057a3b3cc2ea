"""Robustness, second round (issue 19): restore, the terminate wrapper, snapshots that are not states,
values that cannot round-trip, the gymnasium envs, replay records and policy files."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
from games import ALL_GAMES

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError


def same(env_a, env_b) -> bool:
    return json.dumps(env_a.unwrapped.snapshot()) == json.dumps(env_b.unwrapped.snapshot())


# ----------------------------------------------------------------- item 2: the terminate wrapper
def test_terminate_wrapper_judges_the_mask_after_restore_and_raises_on_malformed_actions():
    env = ring_rang_v0.env(illegal_action="terminate")
    env.reset(seed=1)
    start = env.unwrapped.snapshot()
    env.step(52)  # trump clubs: legal
    env.last()
    env.restore(start)
    env.step(52)  # legal again after the restore: no penalty
    assert not any(env.terminations.values()) and env.unwrapped.game.trump == 0
    played = env.unwrapped.snapshot()
    env.restore(start)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(0)  # a card in the trump phase: legal in `played`, not here -> the penalty, not an error
    chooser = f"player_{env.unwrapped.game.chooser}"
    assert all(env.terminations.values()) and env.unwrapped._cumulative_rewards[chooser] == -1.0
    penalised = env.unwrapped.snapshot()
    copy_env = ring_rang_v0.env(illegal_action="terminate")
    copy_env.restore(json.loads(json.dumps(penalised)))  # a penalised env restores
    assert same(env, copy_env)
    for _ in env.agent_iter():
        env.step(None)
    env.restore(played)
    before = env.unwrapped.snapshot()
    for bad in (57, 2**63, 3.0, "3", None, True, -1, np.float32(1), [1]):
        with pytest.raises(IllegalActionError):
            env.step(bad)
        assert env.unwrapped.snapshot() == before  # exactly as the raising env: rejected, nothing changed


def test_terminate_wrapper_on_rang_penalises_only_masked_in_range_actions():
    env = rang_v0.env(illegal_action="terminate")
    env.reset(seed=2)
    legal = env.unwrapped.legal_actions()
    for bad in (28, -1, 2**70, 1.0, "1", None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    masked = next(a for a in range(28) if a not in legal)
    agent = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(masked)
    assert env.unwrapped._cumulative_rewards[agent] == -1.0 and env.unwrapped.snapshot()["illegal_end"] == agent
    with pytest.raises(ValueError):
        env.step(0)  # dead agents step None


# ----------------------------------------------------------------- item 3: settings on restore
@pytest.mark.parametrize(
    ("make_a", "make_b"),
    [
        (lambda: ring_rang_v0.env(signals=True), lambda: ring_rang_v0.env()),
        (lambda: ring_rang_v0.env(declarations=True), lambda: ring_rang_v0.env()),
        (lambda: ring_rang_v0.env(knocking=False), lambda: ring_rang_v0.env()),
        (lambda: ring_rang_v0.env(stop_when_decided=True), lambda: ring_rang_v0.env()),
        (lambda: ring_rang_v0.env(shaping=0.5), lambda: ring_rang_v0.env()),
        (lambda: ring_rang_v0.env(episode="round"), lambda: ring_rang_v0.env()),
        (lambda: rang_v0.env(max_turns_per_deal=50), lambda: rang_v0.env()),
        (lambda: rang_v0.env(episode="deal"), lambda: rang_v0.env()),
        (lambda: rang_v0.env(num_players=3), lambda: rang_v0.env()),
    ],
)
def test_restore_refuses_a_snapshot_of_other_settings(make_a, make_b):
    a, b = make_a(), make_b()
    a.reset(seed=3)
    b.reset(seed=4)
    b.step(b.unwrapped.legal_actions()[0])
    before = b.unwrapped.snapshot()
    with pytest.raises(ValueError, match="malformed"):
        b.restore(a.unwrapped.snapshot())
    assert b.unwrapped.snapshot() == before


# ----------------------------------------------------------------- item 4: snapshots that are not states
def _ring_rang_snapshot(trump_phase: bool) -> tuple:
    env = ring_rang_v0.env()
    env.reset(seed=5)
    if not trump_phase:
        for _ in range(10):  # trump, two tricks and a card
            env.step(env.unwrapped.legal_actions()[0])
    return env, env.unwrapped.snapshot()


RING_RANG_EDITS = [
    (True, {"trick_cards": [0]}),
    (True, {"tricks_played": 3}),
    (True, {"lifted": [2, 0]}),
    (True, {"pile": 2}),
    (True, {"streak": 1}),
    (True, {"knockers": [1, -1, -1, -1], "next_honour": 1}),
    (True, {"declared": [True, False, False, False]}),
    (False, {"streak": -1}),
    (False, {"lifted_any": True}),
    (False, {"knock_ended": True}),
    (False, {"turned": 1}),
    (False, {"winner_team": 0}),
    (False, {"best_card": 51}),
]


@pytest.mark.parametrize(("trump_phase", "edit"), RING_RANG_EDITS)
def test_ring_rang_snapshot_edited_out_of_kind_is_rejected(trump_phase, edit):
    env, snap = _ring_rang_snapshot(trump_phase)
    bad = copy.deepcopy(snap)
    bad["game"].update(edit)
    if bad == snap:
        pytest.skip("the edit is the state itself")
    before = env.unwrapped.snapshot()
    with pytest.raises(ValueError, match="malformed"):
        env.restore(bad)
    assert env.unwrapped.snapshot() == before
    env.restore(snap)  # the true state is accepted


def _rang_snapshot(**kwargs) -> tuple:
    env = rang_v0.env(**kwargs)
    env.reset(seed=6)
    for _ in range(3):
        env.step(env.unwrapped.legal_actions()[0])
    return env, env.unwrapped.snapshot()


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("kwargs", "edit"),
    [
        ({"episode": "deal"}, {"deal_over": True}),
        ({}, {"deal_over": True}),
        ({}, {"truncated": True}),
        ({}, {"log": [5]}),
        ({}, {"log": [["play", "x"]]}),
        ({}, {"log": _nested(100_000)}),
        ({}, {"turns": 5000}),
    ],
)
def test_rang_snapshot_edited_out_of_kind_is_rejected(kwargs, edit):
    env, snap = _rang_snapshot(**kwargs)
    bad = copy.deepcopy(snap) if "log" not in edit else dict(snap, game=dict(snap["game"]))
    bad["game"].update(edit)
    with pytest.raises(ValueError, match="malformed"):
        env.restore(bad)
    assert env.unwrapped.snapshot() == snap


def test_rang_out_seat_must_be_a_player_in_who_went_out():
    env = rang_v0.env(num_players=3)
    env.reset(seed=7)
    snap = env.unwrapped.snapshot()
    game = snap["game"]
    for seat in range(3):
        bad = copy.deepcopy(snap)
        bad["game"]["out_seat"] = seat  # nobody went out: every hand still holds cards
        with pytest.raises(ValueError, match="out_seat"):
            env.restore(bad)
    bad = copy.deepcopy(snap)
    bad["game"].update(alive=[True, True, False], totals=[0, 0, 120], out_seat=2)
    with pytest.raises(ValueError, match="malformed"):
        env.restore(bad)
    assert game == env.unwrapped.snapshot()["game"]


@pytest.mark.parametrize("kind", ["MT19937", "Philox", "SFC64", "huge_inc", "bool_state"])
def test_rng_of_another_bit_generator_is_rejected(kind):
    env, snap = _rang_snapshot()
    bad = copy.deepcopy(snap)
    if kind == "huge_inc":
        bad["rng"]["state"]["inc"] = 2**128
    elif kind == "bool_state":
        bad["rng"]["state"]["state"] = True
    else:
        bad["rng"] = getattr(np.random, kind)(1).state
        bad["rng"] = json.loads(json.dumps(bad["rng"], default=lambda a: a.tolist()))
    with pytest.raises(ValueError, match="rng"):
        env.restore(bad)
    assert env.unwrapped.snapshot() == snap


def test_deeply_nested_json_text_is_a_value_error():
    env, snap = _rang_snapshot()
    text = json.dumps(snap).replace('"log": null', '"log": ' + "[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError):
        env.restore(text)
    assert env.unwrapped.snapshot() == snap


# ----------------------------------------------------------------- item 6: values that cannot round-trip
@pytest.mark.parametrize(
    ("make", "kwargs"),
    [
        (rang_v0.env, {"max_turns_per_deal": 2**63}),
        (rang_v0.env, {"max_turns_per_deal": 2**62 + 1}),
        (ring_rang_v0.env, {"shaping": 1e308}),
        (ring_rang_v0.env, {"shaping": -1e7}),
        (ring_rang_v0.env, {"shaping": float("inf")}),
    ],
)
def test_constructor_values_that_break_the_json_round_trip_are_refused(make, kwargs):
    with pytest.raises(ValueError):
        make(**kwargs)


@pytest.mark.parametrize(
    "seed", [np.random.default_rng(1), np.random.MT19937(1), np.random.PCG64(1), np.random.Generator(np.random.SFC64())]
)
def test_seeds_that_are_generators_are_refused(seed):
    env = ring_rang_v0.env()
    env.reset(seed=3)
    before = env.unwrapped.snapshot()
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)
    assert env.unwrapped.snapshot() == before


def test_largest_values_round_trip():
    env = rang_v0.env(max_turns_per_deal=2**62)
    env.reset(seed=1)
    env.restore(json.dumps(env.unwrapped.snapshot()))
    env = ring_rang_v0.env(shaping=1e6, episode="game")
    env.reset(seed=1)
    env.restore(json.dumps(env.unwrapped.snapshot()))


# ----------------------------------------------------------------- item 5: the gymnasium envs
def _gym(game: str, **kwargs):
    from cardenvs.gym_envs import CardGymEnv

    return CardGymEnv(game, "random", **kwargs)


def _gym_state(env) -> tuple:
    return json.dumps(env.aec.unwrapped.snapshot()), tuple(env._banked), env._credited, env._mask.tobytes()


@pytest.mark.parametrize("mode", ["raise", "terminate"])
@pytest.mark.parametrize("game", ALL_GAMES)
def test_gym_malformed_and_aliasing_actions_are_value_errors_that_change_nothing(game, mode):
    env = _gym(game, illegal_action=mode)
    env.reset(seed=3)
    n = env.action_space.n
    for _ in range(4):
        legal = np.flatnonzero(env.action_masks())
        before = _gym_state(env)
        bad = [int(legal[-1]) - n, n, n + 5, 2**63, -(2**63) - 1, None, 3.7, "3", True, np.float64(1.0), [1]]
        for action in bad:
            with pytest.raises(ValueError):
                env.step(action)
            assert _gym_state(env) == before, action
        _, _, terminated, truncated, _ = env.step(np.int64(legal[0]))
        if terminated or truncated:
            env.reset()


def test_gym_negative_alias_does_not_bank_the_reward():
    """-28 used to pass the mask check as 29's alias, bank the pending reward and only then fail."""
    a, b = _gym("rang", learner_seat=1), _gym("rang", learner_seat=1)
    a.reset(seed=11)
    b.reset(seed=11)
    total_a = total_b = 0.0
    for _ in range(200):
        legal = np.flatnonzero(a.action_masks())
        with pytest.raises(ValueError):
            a.step(int(legal[0]) - a.action_space.n)
        _, reward_a, done_a, trunc_a, _ = a.step(int(legal[0]))
        _, reward_b, done_b, trunc_b, _ = b.step(int(legal[0]))
        total_a, total_b = total_a + reward_a, total_b + reward_b
        assert (reward_a, done_a, trunc_a) == (reward_b, done_b, trunc_b)
        if done_a or trunc_a:
            break
    assert total_a == total_b


@pytest.mark.parametrize("seat", [-1, 4, 9, 1.0, True, "1", None])
def test_gym_learner_seat_is_checked(seat):
    for game in ALL_GAMES:
        env = _gym(game)
        with pytest.raises(ValueError, match="learner_seat"):
            env.reset(seed=1, options={"learner_seat": seat})
        if seat is not None:
            with pytest.raises(ValueError, match="learner_seat"):
                _gym(game, learner_seat=seat)


def test_gym_rang_reset_deals_again_when_the_deal_ends_before_the_learner_decides():
    """Seat 1 holds four Jokers and a 2: played Joker, Joker, Joker, Joker, 2 it goes out at once and seat 2
    cannot answer: the deal ends before the learner (seat 3) decides. reset() deals again."""
    from cardenvs.rang.engine import arrange_deck

    hands = {1: ["JK", "JK", "JK", "JK", "2C"], 2: ["7C", "8C", "9C", "TC", "JC"], 3: ["7H", "8H", "9H", "TH", "JH"],
             4: ["7S", "8S", "9S", "TS", "JS"], 0: ["KC", "KD", "KH", "KS", "QC"]}  # fmt: skip
    deck = arrange_deck(hands, "7D", num_players=5)
    env = _gym("rang", num_players=5, learner_seat=3)
    deals = []
    original = env.aec.reset

    def counting(*args, **kwargs):
        deals.append(1)
        return original(*args, **kwargs)

    env.aec.reset = counting
    for seed in range(40):
        obs, info = env.reset(seed=seed, options={"deck": deck})
        assert info["action_mask"].any()
    assert len(deals) > 40  # some deals ended at once and were dealt again
    short = _gym("rang", num_players=5, learner_seat=0, max_turns_per_deal=2)
    with pytest.raises(ValueError, match="max_turns_per_deal"):
        short.reset(seed=1)  # seat 0 (the dealer) never gets a turn within 2 turns


# ----------------------------------------------------------------- item 9: replay records and policy files
def test_replay_record_with_terminate_is_rejected(tmp_path):
    from cardenvs import replay

    env = ring_rang_v0.env()
    env.reset(seed=1)
    record = replay.record("ring_rang", {}, 1, None, [0])  # a card in the trump phase: illegal
    with pytest.raises(ValueError, match="item 0"):
        replay.replay(record)
    record["env_kwargs"] = {"illegal_action": "terminate"}
    with pytest.raises(ValueError, match="illegal_action"):
        replay.validate(record)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    assert replay.main([str(path)]) == 2  # not exit 0 with a penalty


@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_policy_with_nan_weights_is_refused_at_load(tmp_path, poison):
    from cardenvs.agents.policy import PolicyAgent, load_policy, save_policy

    rng = np.random.default_rng(0)
    weights = {
        "hidden0/weight": rng.normal(size=(8, ring_rang_v0.OBSERVATION_SIZE)).astype(np.float32),
        "hidden0/bias": np.zeros(8, np.float32),
        "action/weight": rng.normal(size=(57, 8)).astype(np.float32),
        "action/bias": np.zeros(57, np.float32),
        "activation": np.array("relu"),
        "game": np.array("ring_rang"),
    }
    path = save_policy(weights, tmp_path / "good.npz")
    assert load_policy(path)["action/bias"].shape == (57,)
    weights["action/bias"] = weights["action/bias"].copy()
    weights["action/bias"][3] = poison
    path = save_policy(weights, tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="NaN or infinite"):
        load_policy(path)
    with pytest.raises(ValueError, match="NaN or infinite"):
        PolicyAgent(weights=weights)


# ----------------------------------------------------------------- the fuzzer's new parts, briefly
@pytest.mark.parametrize("game", ALL_GAMES)
def test_fuzz_restore_terminate_and_gym(game):
    import random

    from fuzz_script import fuzz

    stats = fuzz.Stats()
    for seed in range(3):
        fuzz.fuzz_restore(game, random.Random(seed), stats)
        fuzz.fuzz_terminate(game, seed, stats)
        fuzz.fuzz_gym(game, seed, stats)
    assert not stats.failures, stats.failures[:3]
    assert stats.bad_by_kind["restore: other settings"] > 0 and stats.steps > 0
