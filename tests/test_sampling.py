"""Information-set samplers: every sample agrees with what the observer knows, and samples are uniform."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardenvs.rang.engine import DECK_54, DECK_108, RangGame
from cardenvs.rang.search import RangDiscardMemory, rang_view, sample_rang
from cardenvs.ring_rang.engine import PHASE_PLAY, PHASE_TRUMP, RingRangGame, bits_to_cards
from cardenvs.ring_rang.search import count_ring_rang_deals, ring_rang_view, sample_ring_rang


# ------------------------------------------------------------------ helpers
def ring_rang_position(seed: int, steps: int) -> RingRangGame:
    """A RING RANG round after ``steps`` random actions (knocks included)."""
    rng = random.Random(seed)
    game = RingRangGame(np.random.default_rng(seed), chooser=seed % 4, episode="round")
    for _ in range(steps):
        if game.over:
            break
        actions = game.legal_actions()
        if game.tricks_played == 12 and len(game.trick_cards) == 3:
            break  # keep the round open
        game.apply(rng.choice(actions))
    return game


def public_voids(game: RingRangGame) -> list[int]:
    """Suits each seat failed to follow, read from the public record (independently of the sampler)."""
    voids = [0] * 4
    tricks = [(t[0], t[1]) for t in game.history] + ([(game.leader, game.trick_cards)] if game.trick_cards else [])
    for leader, cards in tricks:
        for i, card in enumerate(cards[1:], 1):
            if card // 13 != cards[0] // 13:
                voids[(leader + i) % 4] |= 1 << (cards[0] // 13)
    return voids


def check_ring_rang_sample(game: RingRangGame, world: RingRangGame, seat: int) -> None:
    if game.phase == PHASE_TRUMP:
        assert world.hands[game.chooser] == game.hands[game.chooser] or seat != game.chooser
        assert sorted(world.deck) == list(range(52))
        assert {c for c in world.deck[:5]} == set(bits_to_cards(world.hands[game.chooser]))
        return
    assert world.hands[seat] == game.hands[seat]
    union = 0
    for s in range(4):
        assert bin(world.hands[s]).count("1") == bin(game.hands[s]).count("1")
        assert union & world.hands[s] == 0
        union |= world.hands[s]
    assert union | game.played == (1 << 52) - 1 and union & game.played == 0
    for s, suits in enumerate(public_voids(game)):
        for suit in range(4):
            if suits >> suit & 1:
                assert not world.hands[s] >> (13 * suit) & 0x1FFF, f"seat {s} shown void in suit {suit}"
    for honour, knocker in enumerate(game.knockers):
        card = game.trump * 13 + (12 - honour)
        if knocker >= 0 and not game.played >> card & 1:
            assert world.hands[knocker] >> card & 1, "a knocker holds its honour until it is played"
    for name in ("trump", "phase", "to_act", "leader", "trick_cards", "history", "lifted", "pile", "streak",
                 "knockers", "played", "tricks_played", "chooser"):
        assert getattr(world, name) == getattr(game, name), name
    assert world.legal_actions() == game.legal_actions()


# ------------------------------------------------------------- RING RANG
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 70), sample_seed=st.integers(0, 1000),
       tries=st.sampled_from([0, 50]))
def test_ring_rang_samples_agree_with_the_information_set(seed, steps, sample_seed, tries):
    game = ring_rang_position(seed, steps)
    if game.over:
        return
    before = game.to_json()
    seat = game.to_act
    view = ring_rang_view(game, seat)
    rng = random.Random(sample_seed)
    for _ in range(3):
        world = sample_ring_rang(view, rng, max_tries=tries)
        check_ring_rang_sample(game, world, seat)
        world.apply(world.legal_actions()[0])  # a sample is a playable game
    assert game.to_json() == before


def test_ring_rang_view_holds_no_hidden_card():
    game = ring_rang_position(3, 21)
    view = ring_rang_view(game, game.to_act)
    hidden = [s for s in range(4) if s != view.seat]
    assert all(view.skeleton.hands[s] == 0 for s in hidden)
    assert view.skeleton.deck == [] and view.skeleton.decks == []


def brute_force_deals(game: RingRangGame, seat: int) -> list[tuple[int, ...]]:
    """Every deal of the unseen cards to the other seats that agrees with the public record."""
    others = [s for s in range(4) if s != seat]
    unseen = bits_to_cards(((1 << 52) - 1) & ~game.played & ~game.hands[seat])
    sizes = [bin(game.hands[s]).count("1") for s in others]
    voids = public_voids(game)
    deals = []
    for first in itertools.combinations(unseen, sizes[0]):
        rest = [c for c in unseen if c not in first]
        for second in itertools.combinations(rest, sizes[1]):
            third = tuple(c for c in rest if c not in second)
            hands = dict(zip(others, (first, second, third), strict=True))
            if any(c // 13 == suit for s in others for c in hands[s] for suit in range(4) if voids[s] >> suit & 1):
                continue
            knocked_ok = all(
                knocker < 0 or knocker == seat or game.played >> (game.trump * 13 + 12 - h) & 1
                or game.trump * 13 + 12 - h in hands[knocker]
                for h, knocker in enumerate(game.knockers)
            )
            if knocked_ok:
                deals.append(tuple(sum(1 << c for c in hands[s]) for s in others))
    return deals


def small_position_with_voids() -> RingRangGame:
    """A late position (<= 3 cards a hand) in which some seat other than the one to act has shown a void."""
    for seed in range(500):
        game = ring_rang_position(seed, 40 + seed % 6)
        if game.over or game.phase != PHASE_PLAY or game.tricks_played < 10:
            continue
        voids = public_voids(game)
        if any(voids[s] for s in range(4) if s != game.to_act):
            return game
    raise AssertionError("no position found")


@pytest.mark.slow
def test_ring_rang_frequencies_match_exact_counts():
    game = small_position_with_voids()
    seat = game.to_act
    deals = brute_force_deals(game, seat)
    view = ring_rang_view(game, seat)
    assert count_ring_rang_deals(view) == len(deals)
    others = [s for s in range(4) if s != seat]
    for tries in (50, 0):  # rejection sampling, and the exact counting fallback alone
        rng = random.Random(tries)
        draws = 200 * len(deals)
        counts = Counter()
        for _ in range(draws):
            world = sample_ring_rang(view, rng, max_tries=tries)
            counts[tuple(world.hands[s] for s in others)] += 1
        assert set(counts) <= set(deals), "a sample outside the consistent deals"
        expected = draws / len(deals)
        chi2 = sum((counts[d] - expected) ** 2 / expected for d in deals)
        df = max(len(deals) - 1, 1)
        assert chi2 < df + 5 * (2 * df) ** 0.5 + 10, (chi2, df)  # far beyond the 0.1% tail would fail
        tv = 0.5 * sum(abs(counts[d] / draws - 1 / len(deals)) for d in deals)
        assert tv < 0.05 + 0.5 * (len(deals) / draws) ** 0.5


def test_ring_rang_knocked_honour_stays_with_the_knocker():
    for seed in range(300):
        game = RingRangGame(np.random.default_rng(seed), chooser=0, episode="round")
        game.apply(52 + seed % 4)
        if 56 in game.legal_actions() or game.to_act != 0:
            break
    rng = random.Random(seed)
    while 56 not in game.legal_actions():
        game.apply(rng.choice([a for a in game.legal_actions() if a < 52]))
    knocker = game.to_act
    game.apply(56)
    game.apply(min(a for a in game.legal_actions() if a < 52 and a != game.trump * 13 + 12))
    observer = (knocker + 1) % 4
    while game.to_act != observer:
        game.apply(min(a for a in game.legal_actions() if a < 52 and a != game.trump * 13 + 12))
    ace = game.trump * 13 + 12
    assert not game.played >> ace & 1
    view = ring_rang_view(game, observer)
    for i in range(50):
        assert sample_ring_rang(view, random.Random(i)).hands[knocker] >> ace & 1


def test_ring_rang_trump_phase_deals_the_deck():
    game = RingRangGame(np.random.default_rng(5), chooser=2, episode="round")
    view = ring_rang_view(game, 2)
    world = sample_ring_rang(view, random.Random(1))
    assert world.hands[2] == game.hands[2] and sorted(world.deck) == list(range(52))
    world.apply(53)
    assert world.hands[2] & game.hands[2] == game.hands[2]
    assert all(bin(h).count("1") == 13 for h in world.hands)


# -------------------------------------------------------------------- Rang
def rang_position(seed: int, steps: int, players: int = 4, observer_memory: bool = True):
    """A Rang deal after ``steps`` random actions; the seat to act keeps its discard memory as an agent would."""
    rng = random.Random(seed)
    game = RangGame.new(players, np.random.default_rng(seed), dealer=seed % players, single_deal=True)
    memories = [RangDiscardMemory() for _ in range(players)]
    for _ in range(steps):
        if game.match_over:
            break
        seat = game.current
        memories[seat].refresh(game)
        action = rng.choice(game.legal_actions())
        memories[seat].record(game, seat, action)
        game.apply(action)
    if not game.match_over:
        memories[game.current].refresh(game)
    return game, memories


def check_rang_sample(game: RangGame, world: RangGame, seat: int, known: list[int]) -> None:
    assert world.hand_cards(seat) == game.hand_cards(seat)
    assert world.hand_size == game.hand_size
    assert len(world.stock) == len(game.stock) and len(world.discard) == len(game.discard)
    assert world.pile == game.pile and world.top == game.top and world.phase == game.phase
    assert world.current == game.current and world.out_seat == game.out_seat
    everything = [c for s in range(game.num_players) for c in world.hand_cards(s)]
    everything += world.stock + world.discard + world.pile
    assert Counter(everything) == Counter(DECK_108 if game.deck_size == 108 else DECK_54)
    assert not Counter(known) - Counter(world.discard)
    assert world.legal_actions() == game.legal_actions()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 200), players=st.sampled_from([2, 4, 6]),
       sample_seed=st.integers(0, 1000))
def test_rang_samples_agree_with_the_information_set(seed, steps, players, sample_seed):
    game, memories = rang_position(seed, steps, players)
    if game.match_over:
        return
    seat = game.current
    known = memories[seat].cards
    assert not Counter(known) - Counter(game.discard), "the discard memory names a card not on the discard pile"
    before = game.to_json()
    view = rang_view(game, seat, known)
    rng = random.Random(sample_seed)
    for _ in range(3):
        world = sample_rang(view, rng)
        check_rang_sample(game, world, seat, known)
    assert game.to_json() == before


def test_rang_discard_memory_finds_own_discards():
    found = 0
    for seed in range(200):
        game, memories = rang_position(seed, 60)
        if not game.match_over and memories[game.current].cards:
            found += 1
            assert not Counter(memories[game.current].cards) - Counter(game.discard)
    assert found > 0


def test_rang_view_holds_no_hidden_card():
    game, _ = rang_position(7, 30)
    view = rang_view(game, game.current)
    for s in range(4):
        if s != view.seat:
            assert view.skeleton.hand_size[s] == 0 and view.skeleton.hand_cards(s) == []
    assert view.skeleton.stock == [] and view.skeleton.discard == [] and view.skeleton.given_decks == []


def test_rang_location_frequencies_match_exact_probabilities():
    """Each unseen card lies in a place with probability (place size) / (unseen cards)."""
    game, memories = rang_position(11, 25)
    seat = game.current
    view = rang_view(game, seat, memories[seat].cards)
    unseen = len(view.unknown)
    card = view.unknown[0]
    places = {f"hand{s}": view.hand_sizes[s] for s in range(4) if s != seat}
    places["stock"] = view.stock_size
    places["discard"] = view.discard_size - len(view.known_discards)
    copies = view.unknown.count(card)
    rng = random.Random(0)
    draws = 4000
    counts = Counter()
    for _ in range(draws):
        world = sample_rang(view, rng)
        for s in range(4):
            if s != seat:
                counts[f"hand{s}"] += world.hand_cards(s).count(card)
        counts["stock"] += world.stock.count(card)
        counts["discard"] += world.discard.count(card) - list(view.known_discards).count(card)
    for place, size in places.items():
        expected = draws * copies * size / unseen
        assert abs(counts[place] - expected) <= 5 * max(expected, 1) ** 0.5 + 1, (place, counts[place], expected)
