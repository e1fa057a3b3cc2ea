"""Pilot (issue 43, item 2): `guided` whose sampled deals are weighted by what the trump choice says, in RING RANG.

PIMC samples the hidden cards uniformly among the deals that agree with the hard constraints (hand sizes, voids,
knocked honours). But the chooser named trump after seeing its first 5 cards, so a deal in which the chooser's
cards make that choice unlikely is less likely to be the real one. Here each of ``pool`` sampled deals gets the
weight P(trump named | deal) under the shipped policy: the mean, over ``subsets`` random 5-card parts of the
chooser's 13 cards of the round (its hand now plus what it played), of the policy's probability of the trump
that was named, from the observation the chooser had then. ``worlds`` deals are drawn from the pool in
proportion to their weights (systematic resampling) and searched as ``guided`` does. With ``plays=K`` the weight
is also multiplied by the policy's probability of the last K cards the other seats played, each from the
observation its player had then (the round replayed from its deal in that world), raised to ``temper``. The
search still reads the seat's information set only (the other hands are sampled, then weighed). Neither
weighting paid (docs/search.md, "Weighting the sampled deals").

    python scripts/belief_pilot.py check --positions 200 --seed 0
    PYTHONPATH=scripts cardenvs eval --game ring_rang --agents belief_pilot:make:iterations=400 pimc:iterations=500 \\
        --deals 300 --workers 2 --seed 400

``check`` measures whether the weights move the sampled deals toward the real ones: at positions of the
shipped policy's self-play where another seat chose trump, the chooser's trump count in the real deal, in
uniform samples and in weighted samples.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

import numpy as np

from cardenvs.agents.bench_search import positions
from cardenvs.agents.guided import GuidedAgent
from cardenvs.agents.registry import make_agent
from cardenvs.agents.search import world_search
from cardenvs.ring_rang.engine import ACTION_KNOCK, ACTION_TRUMP, PHASE_PLAY, bits_to_cards
from cardenvs.ring_rang.search import RingRangRules, _deck_from_round


def round_plays(world: Any) -> list[tuple[int, int]]:
    """(seat, card) of every card played this round, in order."""
    plays = [((leader + i) & 3, card) for leader, cards, _w, _l in world.history for i, card in enumerate(cards)]
    return plays + [((world.leader + i) & 3, card) for i, card in enumerate(world.trick_cards)]


def round_cards(world: Any, seat: int) -> list[int]:
    """The cards ``seat`` was dealt this round: its hand now plus the cards it has played."""
    return bits_to_cards(world.hands[seat] | sum(1 << card for player, card in round_plays(world) if player == seat))


def trump_likelihoods(worlds: list[Any], policy: Any, rng: random.Random, subsets: int) -> np.ndarray:
    """Per world, the policy's mean probability of the trump named, over random first-5 parts of the chooser's
    cards (the observation rebuilt at the round's start, the chooser holding those 5)."""
    start = worlds[0].clone()  # the round's start is public but for the chooser's 5 cards: one state for all
    start.decks, start.decks_used = [list(range(52))], 0
    start._start_round()
    chooser = start.chooser
    observations = []
    for world in worlds:
        cards = round_cards(world, chooser)
        for _ in range(subsets):
            start.hands[chooser] = sum(1 << c for c in rng.sample(cards, 5))
            observations.append(start.observe(chooser))
    mask = start.legal_mask()
    probabilities = policy.probabilities(np.stack(observations), np.broadcast_to(mask, (len(observations), mask.size)))
    named = ACTION_TRUMP + worlds[0].trump
    return probabilities[:, named].reshape(len(worlds), subsets).mean(axis=1)


def play_likelihoods(worlds: list[Any], seat: int, policy: Any, last: int) -> np.ndarray:
    """Per world, the policy's probability of the last ``last`` cards the other seats played this round, each
    from the observation its player had then: the round replayed from its deal in that world (a recorded knock
    is made on the knocker's first turn it was legal, as the record does not say when it came)."""
    rows, masks, played, owner = [], [], [], []
    for index, world in enumerate(worlds):
        plays = round_plays(world)
        first = len(plays) - last
        replay = world.clone()
        replay.stop_when_decided = False  # the search's horizon would end the replay where the real round went on
        replay.decks, replay.decks_used = [_deck_from_round(world, world.hands)], 0
        replay._start_round()
        replay.step(ACTION_TRUMP + world.trump)
        for number, (player, card) in enumerate(plays):
            while (ACTION_KNOCK in replay.legal_actions()
                   and world.knockers[replay.next_honour] == player):
                replay.step(ACTION_KNOCK)
            if number >= first and player != seat:
                rows.append(replay.observe(player))
                masks.append(replay.legal_mask())
                played.append(card)
                owner.append(index)
            replay.step(card)
    likelihood = np.ones(len(worlds))
    if rows:
        probabilities = policy.probabilities(np.stack(rows), np.stack(masks))
        np.multiply.at(likelihood, owner, probabilities[np.arange(len(rows)), played])
    return likelihood


def resample(weights: np.ndarray, count: int, rng: random.Random) -> list[int]:
    """Systematic resampling: ``count`` indices drawn in proportion to ``weights``, with low variance."""
    cumulative = np.cumsum(weights / weights.sum())
    offset = rng.random() / count
    return [min(int(np.searchsorted(cumulative, offset + i / count)), len(weights) - 1) for i in range(count)]


class BeliefGuided(GuidedAgent):
    """``guided`` whose worlds, at card play when another seat chose trump, are resampled by the likelihood of
    the trump named (and, with ``plays``, of the last plays)."""

    def __init__(self, game: str, seed: int | None = None, pool: int = 32, subsets: int = 1, plays: int = 0,
                 temper: float = 0.5, **params: Any):
        super().__init__(game, seed=seed, **params)
        self.pool, self.subsets, self.plays, self.temper = int(pool), int(subsets), int(plays), float(temper)

    def sampled(self, view: Any, rng: random.Random) -> list[Any]:
        worlds = [self.rules.sample(view, rng) for _ in range(self.pool)]
        weights = trump_likelihoods(worlds, self.prior, rng, self.subsets)
        if self.plays:  # tempered: the other seats do not play as the policy does
            weights = weights * play_likelihoods(worlds, view.seat, self.prior, self.plays) ** self.temper
        return [worlds[i] for i in resample(weights, self.worlds, rng)]

    def means(self, view: Any, candidates: list[int], rng: random.Random) -> dict[int, float]:
        game = view.skeleton
        if game.phase != PHASE_PLAY or game.chooser == view.seat:
            return super().means(view, candidates, rng)
        samples = self.sampled(view, rng)
        return world_search(self.rules, samples, view.seat, candidates, rng, self.rollout, self.iterations)[1]


def make(game: str, seed: int | None = None, **params: Any) -> BeliefGuided:
    return BeliefGuided(game, seed=seed, **params)


def chooser_trumps(world: Any) -> int:
    return bin(world.hands[world.chooser] >> (13 * world.trump) & 0x1FFF).count("1")


def check(count: int, seed: int, pool: int, subsets: int) -> None:
    """The chooser's trump count: real deal, uniform samples, weighted samples (mean over positions)."""
    rules = RingRangRules()
    mover = make_agent("trained", "ring_rang", seed=seed, num_players=4)
    agent = BeliefGuided("ring_rang", seed=seed, pool=pool, subsets=subsets)
    rng = random.Random(seed)
    real, uniform, weighted, found = [], [], [], 0
    for env, _obs in positions("ring_rang", 10**9, seed, mover=mover, keep=0.3):
        game = env.unwrapped.game
        seat = game.to_act
        if game.phase != PHASE_PLAY or game.chooser == seat:
            continue
        view = rules.view(game, seat, rules.new_memory())
        worlds = [rules.sample(view, rng) for _ in range(pool)]
        weights = trump_likelihoods(worlds, agent.prior, rng, subsets)
        counts = np.array([chooser_trumps(w) for w in worlds], float)
        real.append(chooser_trumps(game))
        uniform.append(counts.mean())
        weighted.append(float((weights * counts).sum() / weights.sum()))
        found += 1
        if found >= count:
            break
    for name, values in (("real deal", real), ("uniform samples", uniform), ("weighted samples", weighted)):
        print(f"{name:<17} chooser's trumps in hand: {np.mean(values):.3f}")
    error = lambda values: float(np.mean(np.abs(np.array(values) - np.array(real))))  # noqa: E731
    print(f"mean |sample - real|: uniform {error(uniform):.3f}, weighted {error(weighted):.3f} ({found} positions)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    checking = commands.add_parser("check", help="do the weights move the samples toward the real deal?")
    checking.add_argument("--positions", type=int, default=200)
    checking.add_argument("--seed", type=int, default=0)
    checking.add_argument("--pool", type=int, default=32)
    checking.add_argument("--subsets", type=int, default=1)
    args = parser.parse_args()
    check(args.positions, args.seed, args.pool, args.subsets)


if __name__ == "__main__":
    main()
