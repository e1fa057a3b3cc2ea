"""PIMC and ISMCTS: no peeking, the live game untouched, reproducible, usable by the harness."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from games import BUILTIN_GAMES

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.agents.registry import make_agent
from cardenvs.agents.search import ismcts_search
from cardenvs.cards import CODES
from cardenvs.rang.search import rang_view
from cardenvs.ring_rang.search import RingRangRules, ring_rang_view
from cardenvs.train.evaluate import EvalConfig, run_records

SPECS = ["pimc:iterations=40,worlds=4", "ismcts:iterations=40", "guided:iterations=40,worlds=4,weight=0.3"]


def advance(env, steps: int, seed: int) -> None:
    """Random legal play for ``steps`` decisions (stops early at the end)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, _r, term, trunc, _ = env.last()
        if term or trunc:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def ring_rang_env(seed: int, steps: int):
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=seed, options={"chooser": seed % 4})
    advance(env, steps, seed)
    return env


def rang_env(seed: int, steps: int):
    env = rang_v0.env(num_players=4, episode="deal")
    env.reset(seed=seed)
    advance(env, steps, seed)
    return env


def swapped_ring_rang(env):
    """A copy of ``env`` with two unseen cards of one suit swapped between two opponents of the seat to act."""
    game = env.unwrapped.game
    seat = game.to_act
    knocked = {game.trump * 13 + 12 - h for h, k in enumerate(game.knockers) if k >= 0}
    others = [s for s in range(4) if s != seat]
    for a in others:
        for b in others:
            if a >= b:
                continue
            for x in range(52):
                for y in range(52):
                    if (x // 13 == y // 13 and game.hands[a] >> x & 1 and game.hands[b] >> y & 1
                            and x not in knocked and y not in knocked):
                        snap = env.unwrapped.snapshot()
                        hands = snap["game"]["hands"]
                        hands[a] ^= (1 << x) | (1 << y)
                        hands[b] ^= (1 << x) | (1 << y)
                        snap["game"]["deck"] = list(range(52))  # the deck record is hidden too
                        other = ring_rang_v0.env(episode="round")
                        other.reset(seed=0)
                        other.restore(snap)
                        return other
    return None


def swapped_rang(env):
    """A copy of ``env`` with an opponent's card swapped with a card of the stock (a different rank)."""
    game = env.unwrapped.game
    seat = game.current
    for other in range(game.num_players):
        if other == seat or not game.hand_size[other]:
            continue
        for card in game.hand_cards(other):
            for i, stocked in enumerate(game.stock):
                if stocked % 13 != card % 13 or (card == 52) != (stocked == 52):
                    snap = env.unwrapped.snapshot()
                    data = snap["game"]
                    hand = data["hands"][other]
                    hand[hand.index(CODES[card])] = CODES[stocked]
                    stock = data["stock_top_first"]
                    stock[len(game.stock) - 1 - i] = CODES[card]
                    copy = rang_v0.env(num_players=4, episode="deal")
                    copy.reset(seed=0)
                    copy.restore(snap)
                    return copy
    return None


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("seed,steps", [(1, 12), (2, 7), (3, 22), (4, 35)])
def test_ring_rang_no_peeking(spec, seed, steps):
    env = ring_rang_env(seed, steps)
    other = swapped_ring_rang(env)
    if other is None:
        pytest.skip("no swappable pair in this position")
    seat = env.unwrapped.game.to_act
    assert env.unwrapped.game.hands != other.unwrapped.game.hands
    assert ring_rang_view(env.unwrapped.game, seat).fingerprint() == ring_rang_view(
        other.unwrapped.game, seat).fingerprint()
    choices = []
    for e in (env, other):
        agent = make_agent(spec, "ring_rang", seed=17)
        agent.observe_env(e)
        choices.append(agent.act(e.last()[0]))
    assert choices[0] == choices[1]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("seed,steps", [(1, 3), (2, 15), (3, 30)])
def test_rang_no_peeking(spec, seed, steps):
    env = rang_env(seed, steps)
    if not env.agents:
        pytest.skip("deal over")
    other = swapped_rang(env)
    if other is None:
        pytest.skip("nothing to swap")
    seat = env.unwrapped.game.current
    assert env.unwrapped.game.hands != other.unwrapped.game.hands
    assert rang_view(env.unwrapped.game, seat).fingerprint() == rang_view(other.unwrapped.game, seat).fingerprint()
    choices = []
    for e in (env, other):
        agent = make_agent(spec, "rang", seed=5, num_players=4)
        agent.observe_env(e)
        choices.append(agent.act(e.last()[0]))
    assert choices[0] == choices[1]


@pytest.mark.parametrize("game", BUILTIN_GAMES)
@pytest.mark.parametrize("spec", [*SPECS, "oracle:iterations=30"])  # the oracle reads the true state: same promise
def test_search_leaves_the_live_game_unchanged_and_is_reproducible(game, spec):
    extra = {"num_players": 4} if game == "rang" else {}
    for seed in range(3):
        env = ring_rang_env(seed, 5 + 9 * seed) if game == "ring_rang" else rang_env(seed, 4 + 9 * seed)
        if not env.agents:
            continue
        before = json.dumps(env.unwrapped.snapshot(), sort_keys=True)
        obs = env.last()[0]
        first = make_agent(spec, game, seed=seed, **extra)
        second = make_agent(spec, game, seed=seed, **extra)
        first.observe_env(env)
        second.observe_env(env)
        action = first.act(obs)
        assert obs["action_mask"][action]
        assert second.act(obs) == action
        assert json.dumps(env.unwrapped.snapshot(), sort_keys=True) == before


def test_ismcts_takes_the_last_trick_it_can_win():
    """Trick 13, the searcher leads: any card wins or loses by itself; ISMCTS must see the forced outcome."""
    env = ring_rang_env(8, 0)
    game = env.unwrapped.game
    rng = random.Random(0)
    while not (game.tricks_played == 11 and not game.trick_cards):
        game.apply(rng.choice([a for a in game.legal_actions() if a < 56]))
    seat = game.to_act
    view = ring_rang_view(game, seat)
    legal = game.legal_actions()
    rules = RingRangRules()
    action, visits = ismcts_search(rules, view, legal, random.Random(1), rules.random_rollout, 300)
    assert action in legal and sum(visits.values()) == 300


def test_search_agent_needs_the_env_and_checks_parameters():
    agent = make_agent("ismcts", "ring_rang", seed=0)
    env = ring_rang_env(0, 0)
    with pytest.raises(ValueError, match="needs the env"):
        agent.act(env.last()[0])
    for bad in ("ismcts:iterations=0", "pimc:worlds=0", "ismcts:c=-1", "pimc:ms=0", "ismcts:bogus=1"):
        with pytest.raises(ValueError):
            make_agent(bad, "ring_rang", seed=0)


@pytest.mark.parametrize("game", BUILTIN_GAMES)
def test_harness_plays_search_agents(game):
    config = EvalConfig(game=game, agents=["ismcts:iterations=5", "pimc:iterations=8,worlds=2"], deals=2,
                        progress=False)
    records = run_records(config)
    assert records and all(not r.truncated for r in records)


def test_one_search_agent_can_advise_every_seat_while_another_policy_moves():
    """propose() leaves the seat's memory alone; played() records the move actually made, per seat (Rang discards)."""
    from collections import Counter

    from cardenvs.rang.engine import DISCARD_OFFSET

    adviser = make_agent("ismcts:iterations=5", "rang", seed=3, num_players=4)
    mover = np.random.default_rng(3)
    discards_recorded = 0
    for seed in range(6):
        env = rang_v0.env(num_players=4, episode="deal")
        env.reset(seed=seed)
        adviser.reset(seed)
        for _ in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            game = env.unwrapped.game
            seat = int(env.agent_selection.rsplit("_", 1)[1])
            assert obs["action_mask"][adviser.propose(obs, env)]
            remembered = list(adviser._memory(seat).cards)  # refreshed by propose, and no proposal in it:
            assert not Counter(remembered) - Counter(game.discard)  # only discards made that are still there
            move = int(mover.choice(np.flatnonzero(obs["action_mask"])))
            discarded = [game.hands[seat][move - DISCARD_OFFSET][0]] if move >= DISCARD_OFFSET else []
            adviser.played(move)
            assert adviser._memory(seat).cards == remembered + discarded
            discards_recorded += len(discarded)
            env.step(move)
    assert discards_recorded > 0


def test_rollout_with_a_registry_agent():
    env = ring_rang_env(4, 10)
    agent = make_agent("pimc:iterations=6,worlds=2,rollout=random", "ring_rang", seed=1)
    agent.observe_env(env)
    assert env.last()[0]["action_mask"][agent.act(env.last()[0])]
    slow = make_agent("ismcts:iterations=3,rollout=rules_basic", "ring_rang", seed=1)
    slow.observe_env(env)
    assert env.last()[0]["action_mask"][slow.act(env.last()[0])]


def test_bench_search_takes_specs_with_parameters(capsys):
    from cardenvs.agents.bench_search import main as bench_main

    args = ["--games", "rang", "--agents", "pimc:worlds=2", "ismcts", "--iterations", "4", "--decisions", "2"]
    assert bench_main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["game", "agent", "iterations"]
    assert [line.split()[:3] for line in lines[1:]] == [["rang", "pimc:worlds=2", "4"], ["rang", "ismcts", "4"]]


def test_oracle_sees_the_hidden_cards():
    """Two deals the acting seat cannot tell apart: the oracle's action values differ, a fair search's cannot."""
    from cardenvs.agents.search import world_search

    for seed in range(20):
        env = ring_rang_env(seed, 20)
        other = swapped_ring_rang(env)
        if other is None or not env.agents:
            continue
        rules = RingRangRules()
        seat = env.unwrapped.game.to_act
        legal = np.flatnonzero(env.last()[0]["action_mask"]).tolist()
        if len(legal) < 2:
            continue
        values = []
        for e in (env, other):
            world = rules.horizon(e.unwrapped.game.clone())
            values.append(world_search(rules, [world], seat, legal, random.Random(0), rules.random_rollout, 200)[1])
        if values[0] != values[1]:
            return
    pytest.fail("the oracle's action values never depended on the hidden cards")


def test_the_hands_oracle_sees_the_hands_but_not_the_stocks_order():
    """oracle:sees=hands (Rang): its values ignore the stock's order, yet depend on the other hands."""
    order_ignored = hands_seen = 0
    for seed in range(30):
        env = rang_env(seed, 10)
        if not env.agents or len(np.flatnonzero(env.last()[0]["action_mask"])) < 2:
            continue
        reordered = rang_v0.env(num_players=4, episode="deal")
        reordered.reset(seed=0)
        snap = env.unwrapped.snapshot()
        snap["game"]["stock_top_first"] = snap["game"]["stock_top_first"][::-1]
        reordered.restore(snap)
        values = []
        for e in (env, reordered, swapped_rang(env)):
            if e is None:
                continue
            agent = make_agent("oracle:iterations=60,sees=hands,worlds=3", "rang", seed=2, num_players=4)
            agent.act(e.last()[0], e)
            values.append(agent.last_values)
        assert values[0] == values[1]
        order_ignored += 1
        hands_seen += len(values) == 3 and values[2] != values[0]
    assert order_ignored > 5 and hands_seen > 0


def test_the_hands_oracle_is_for_rang_only():
    with pytest.raises(ValueError, match="no stock"):
        make_agent("oracle:sees=hands", "ring_rang", seed=0)
    with pytest.raises(ValueError, match="sees"):
        make_agent("oracle:sees=stock", "rang", seed=0, num_players=4)


def test_rang_win_bonus_rewards_the_seat_that_went_out():
    """``win_bonus`` adds to the goer-out's reward only; the others keep -(points)/20; RING RANG refuses it."""
    env = rang_env(3, 0)
    advance(env, 2000, 3)
    game = env.unwrapped.game
    assert game.went_out >= 0 and game.last_points is not None
    plain = make_agent("ismcts:iterations=5", "rang", seed=0, num_players=4).rules.rewards(game)
    assert plain == tuple(-p / 20 for p in game.last_points)
    for spec in ("ismcts:iterations=5,win_bonus=1.0", "oracle:iterations=5,sees=hands,win_bonus=1.0"):
        bonus = make_agent(spec, "rang", seed=0, num_players=4).rules.rewards(game)
        assert [b - p for b, p in zip(bonus, plain, strict=True)] == [float(s == game.went_out) for s in range(4)]
    for spec in ("ismcts:win_bonus=1", "oracle:win_bonus=1"):
        with pytest.raises(ValueError, match="win_bonus"):
            make_agent(spec, "ring_rang", seed=0)
    for bad in ("pimc:win_bonus=-1", "ismcts:win_bonus=true"):
        with pytest.raises(ValueError, match="win_bonus"):
            make_agent(bad, "rang", seed=0, num_players=4)


def test_rang_costliest_rollout_sheds_the_costliest_legal_card():
    """``rollout=costliest`` (Rang): at every step of the playout the move's card is worth the most points of the
    legal moves (plays and discards alike), and the playout ends the deal; RING RANG has no such rollout."""
    from cardenvs.rang.engine import DISCARD_OFFSET, KIND_POINTS
    from cardenvs.rang.search import RangRules

    class Recording:
        def __init__(self, world):
            self.world, self.moves, self.legal = world, [], []

        def is_over(self):
            return self.world.is_over()

        def legal_actions(self):
            self.legal = self.world.legal_actions()
            return self.legal

        def step(self, action):
            self.moves.append((self.legal, action))
            self.world.step(action)

    env = rang_env(5, 3)
    rules = RangRules()
    world = Recording(rules.horizon(env.unwrapped.game.clone()))
    rules.costliest_rollout(world, random.Random(0))
    assert world.is_over() and len(world.moves) > 5
    kinds = {a % DISCARD_OFFSET for legal, _ in world.moves for a in legal}
    assert len(kinds) > 3
    for legal, action in world.moves:
        assert KIND_POINTS[action % DISCARD_OFFSET] == max(KIND_POINTS[a % DISCARD_OFFSET] for a in legal)
    agent = make_agent("ismcts:iterations=20,rollout=costliest,win_bonus=1.0", "rang", seed=0, num_players=4)
    live = rang_env(5, 3)
    agent.observe_env(live)
    assert live.last()[0]["action_mask"][agent.act(live.last()[0])]
    with pytest.raises(ValueError, match="rollout"):
        make_agent("pimc:rollout=costliest", "ring_rang", seed=0)


@pytest.mark.parametrize("game", ["rang", "ring_rang"])
@pytest.mark.slow
def test_batched_policy_rollouts_end_each_world_as_one_at_a_time(game):
    """``AgentRollout.many`` steps every world with one network pass a step; with a greedy policy each world
    must end exactly as when played out alone, and PIMC's action values must not change with the batching."""
    from cardenvs.agents.search import AgentRollout, world_search

    rollout = AgentRollout("trained", game, 4, seed=0)
    env = (ring_rang_env if game == "ring_rang" else rang_env)(5, 9)
    search = make_agent("pimc", game, seed=0, num_players=4)
    search.observe_env(env)
    rules, game_now = search.rules, env.unwrapped.game
    view = search.information(game_now, game_now.current_player())
    worlds = [rules.sample(view, random.Random(i)) for i in range(6)]  # the worlds of one decision
    alone, together = [w.clone() for w in worlds], [w.clone() for w in worlds]
    for world in alone:
        rollout(world, random.Random(0))
    rollout.many(together, random.Random(0))
    assert all(w.is_over() for w in together)
    assert [w.to_json() for w in alone] == [w.to_json() for w in together]
    seat, legal = worlds[0].current_player(), worlds[0].legal_actions()
    batched = world_search(rules, worlds, seat, legal, random.Random(0), rollout, 3 * len(worlds) * len(legal))
    # the bound method has no ``batched`` flag: the same playouts, one at a time
    plain = world_search(rules, worlds, seat, legal, random.Random(0), rollout.__call__, 3 * len(worlds) * len(legal))
    assert batched == plain


def test_policy_act_batch_matches_act_row_by_row():
    agent = make_agent("trained", "rang", seed=0, num_players=4)
    observations, masks = [], []
    for seed in range(8):
        obs = rang_env(seed, seed * 3).last()[0]
        observations.append(obs["observation"])
        masks.append(obs["action_mask"])
    batch = agent.act_batch(np.stack(observations), np.stack(masks)).tolist()
    assert batch == [agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)]
    assert all(masks[i][a] for i, a in enumerate(batch))
    sampler = make_agent("trained:greedy=false", "rang", seed=0, num_players=4)
    drawn = sampler.act_batch(np.stack(observations), np.stack(masks))
    assert all(masks[i][a] for i, a in enumerate(drawn.tolist()))


def _positions(game: str, count: int):
    """(env, observation) at ``count`` decisions with two or more legal moves, from random play."""
    make = ring_rang_env if game == "ring_rang" else rang_env
    found, seed = [], 0
    while len(found) < count:
        seed += 1
        env = make(seed, 3 + seed * 5 % 30)
        if env.agents and np.count_nonzero(env.last()[0]["action_mask"]) >= 2:
            found.append((env, env.last()[0]))
    return found


@pytest.mark.parametrize("game", ["ring_rang", "rang"])
def test_guided_searches_only_the_policys_likeliest_moves(game):
    """``guided``: the move is one of the prior's ``top`` likeliest; with ``top=1`` it is the policy's own move,
    and a prior of huge weight makes the policy's choice among the candidates win over the playouts."""
    policy = make_agent("trained", game, seed=0, num_players=4)
    for env, observation in _positions(game, 6):
        probabilities = policy.probabilities(observation["observation"], observation["action_mask"])
        likeliest = sorted(np.flatnonzero(observation["action_mask"]).tolist(), key=lambda a: -probabilities[a])
        for spec, allowed in (("guided:iterations=30,worlds=3,top=2", likeliest[:2]),
                              ("guided:iterations=30,worlds=3,top=1", likeliest[:1]),
                              ("guided:iterations=30,worlds=3,top=4,weight=1000000", likeliest[:1])):
            agent = make_agent(spec, game, seed=3, num_players=4)
            assert agent.act(observation, env) in allowed, spec


def test_guided_checks_its_parameters():
    for bad, word in (("guided:top=0", "top"), ("guided:weight=-1", "weight"), ("guided:prior=random", "prior"),
                      ("guided:prior=pimc", "prior")):
        with pytest.raises(ValueError, match=word):
            make_agent(bad, "ring_rang", seed=0)


def test_ring_rang_tricks_rollout_plays_the_trick_rule_to_the_end():
    """``rollout=tricks`` (RING RANG): with no exploration, a follower who can beat the trick while its partner
    is not winning plays its lowest winning card (a plain card before a trump), otherwise its lowest card; the
    playout never knocks and ends the round; Rang has no such rollout."""
    from cardenvs.ring_rang.engine import ACTION_KNOCK

    rules = RingRangRules()
    for seed in range(1, 6):
        world = rules.horizon(ring_rang_env(seed, 0).unwrapped.game.clone())
        moves = []
        original_step = world.step

        def step(action, world=world, moves=moves, original_step=original_step):
            if world.phase == 1:
                trick = list(world.trick_cards)
                moves.append((trick, world.best_card, world.best_seat, world.to_act, world.trump,
                              world.legal_actions(), action))
            return original_step(action)

        world.step = step
        rules.tricks_rollout(world, random.Random(seed), explore=0.0)
        assert world.is_over() and moves
        for trick, best, best_seat, seat, trump, legal, action in moves:
            assert action in legal and action != ACTION_KNOCK
            if not trick:
                continue
            cards = [a for a in legal if a < 52]
            def key(c, trump=trump):
                return c // 13 == trump, c % 13

            winners = [c for c in cards if (c // 13 == best // 13 and c > best)
                       or (c // 13 == trump and best // 13 != trump)]
            expected = min(winners, key=key) if winners and best_seat != seat ^ 2 else min(cards, key=key)
            assert action == expected
    with pytest.raises(ValueError, match="rollout"):
        make_agent("pimc:rollout=tricks", "rang", seed=0, num_players=4)


def test_search_regret_script_ranks_agents_against_a_deeper_search(tmp_path):
    """``scripts/search_regret.py`` (the tuning guide of docs/search.md) runs end to end on a few positions."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "search_regret.py"
    result = subprocess.run([sys.executable, str(script), "--positions", "4", "--reference", "8", "--workers", "1",
                             "--agents", "trained", "pimc:iterations=20", "--cache", str(tmp_path)],
                            capture_output=True, text=True, timeout=300, check=True)
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["trained", "pimc:iterations=20"]
    assert all("regret" in line and "agreement" in line for line in lines)
    assert list(tmp_path.glob("ring_rang_p4_r8_s0.json"))
