"""RING RANG observations: the named parts of a seat's view, their encoder and decoder.

The one place the observation is defined (OpenSpiel's Observer): the PettingZoo env
(:mod:`cardenvs.ring_rang_v0`), :meth:`RingRangGame.observe`, search and the batched env
(:mod:`cardenvs.ring_rang.vector`) all use it. Seats are relative to the viewer (0 = self,
1 = left, 2 = partner, 3 = right), teams own first; the table of parts is in the env's docs.

:func:`observe` builds a view from scratch; :class:`Observer` keeps the four views of one game
up to date step by step (a card played touches a few entries), which is what makes the AEC env
fast, and must always agree with :func:`observe` (tests/test_ring_rang_env.py checks it).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .engine import (
    ACTION_DECLARE,
    ACTION_KNOCK,
    ACTION_TRUMP,
    ACTION_TURNED,
    MAX_SCORE,
    NUM_ACTIONS,
    NUM_SEATS,
    NUM_TRICKS,
    PHASE_PLAY,
    RingRangGame,
    bits_to_cards,
)

__all__ = ["OBSERVATION_PARTS", "OBSERVATION_SIZE", "OFFSETS", "Observer", "decode_observation", "observe",
           "suit_symmetries"]

OBSERVATION_PARTS: list[tuple[str, int]] = [
    ("hand", 52),
    ("trump", 4),
    ("phase", 3),
    ("trick_number", 13),
    ("trick_leader", 4),
    ("current_trick", 4 * 52),
    ("played", 4 * 52),
    ("pile", 13),
    ("streak_holder", 4),
    ("lifted", 2 * 14),
    ("first_lift_done", 1),
    ("knocks", 4 * 4),
    ("knocking_over", 1),
    ("scores", 2 * (MAX_SCORE + 1)),
    ("chooser", 4),
    ("dealer", 4),
    ("turned", 26),
    ("declared", 4),
]
OFFSETS: dict[str, int] = {}
_position = 0
for _name, _size in OBSERVATION_PARTS:
    OFFSETS[_name] = _position
    _position += _size
OBSERVATION_SIZE = _position

HAND = OFFSETS["hand"]
TRUMP = OFFSETS["trump"]
PHASE = OFFSETS["phase"]
TRICK_NUMBER = OFFSETS["trick_number"]
LEADER = OFFSETS["trick_leader"]
CURRENT = OFFSETS["current_trick"]
PLAYED = OFFSETS["played"]
PILE = OFFSETS["pile"]
STREAK = OFFSETS["streak_holder"]
LIFTED = OFFSETS["lifted"]
FIRST_LIFT = OFFSETS["first_lift_done"]
KNOCKS = OFFSETS["knocks"]
KNOCKING_OVER = OFFSETS["knocking_over"]
SCORES = OFFSETS["scores"]
CHOOSER = OFFSETS["chooser"]
DEALER = OFFSETS["dealer"]
TURNED = OFFSETS["turned"]
DECLARED = OFFSETS["declared"]
_SHAPES = {
    "current_trick": (4, 52),
    "played": (4, 52),
    "lifted": (2, 14),
    "knocks": (4, 4),
    "scores": (2, MAX_SCORE + 1),
}


def decode_observation(vec: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation vector into its named parts (2-D where the part is a table)."""
    vec = np.asarray(vec)
    if vec.shape != (OBSERVATION_SIZE,):
        raise ValueError(f"observation must have shape ({OBSERVATION_SIZE},), got {vec.shape}")
    parts = {}
    for name, size in OBSERVATION_PARTS:
        part = vec[OFFSETS[name] : OFFSETS[name] + size]
        parts[name] = part.reshape(_SHAPES[name]) if name in _SHAPES else part
    return parts


def observe(game: RingRangGame, viewer: int) -> np.ndarray:
    """The view of ``viewer`` built from scratch."""
    obs = np.zeros(OBSERVATION_SIZE, np.float32)
    for card in bits_to_cards(game.hands[viewer]):
        obs[HAND + card] = 1.0
    if game.trump >= 0:
        obs[TRUMP + game.trump] = 1.0
    obs[PHASE + game.phase] = 1.0
    for leader, cards, _winner, _lift in game.history:
        _mark_trick(obs, viewer, leader, cards, PLAYED)
    if game.trick_cards:
        _mark_trick(obs, viewer, game.leader, game.trick_cards, PLAYED)
        _mark_trick(obs, viewer, game.leader, game.trick_cards, CURRENT)
        obs[LEADER + ((game.leader - viewer) & 3)] = 1.0
    _write_trick_counters(obs, viewer, game)
    _write_knocks(obs, viewer, game)
    own = viewer & 1
    obs[SCORES + min(game.scores[own], MAX_SCORE)] = 1.0
    obs[SCORES + MAX_SCORE + 1 + min(game.scores[1 - own], MAX_SCORE)] = 1.0
    obs[CHOOSER + ((game.chooser - viewer) & 3)] = 1.0
    obs[DEALER + ((game.dealer - viewer) & 3)] = 1.0
    for card in bits_to_cards(game.turned):
        obs[TURNED + card] = 1.0
    for seat, flag in enumerate(game.declared):
        if flag:
            obs[DECLARED + ((seat - viewer) & 3)] = 1.0
    return obs


def suit_symmetries() -> list[tuple[np.ndarray, np.ndarray]]:
    """The 24 renamings of the suits as index maps, for data augmentation: the base game's rules treat
    the four suits alike (only the ``signals`` variant names clubs and diamonds), so renaming them in a
    position renames them in its best move. Each pair is ``(observation_index, action_map)``: the renamed
    view is ``obs[..., observation_index]``, the renamed action ``action_map[action]``, the renamed legal
    mask ``mask[..., np.argsort(action_map)]``. Base game only (``NUM_ACTIONS`` actions)."""
    maps = []
    for order in itertools.permutations(range(4)):
        card_map = np.array([order[card // 13] * 13 + card % 13 for card in range(52)])  # old card -> new card
        observation_index = np.arange(OBSERVATION_SIZE)
        for block in [HAND] + [part + 52 * seat for part in (CURRENT, PLAYED) for seat in range(NUM_SEATS)]:
            observation_index[block + card_map] = block + np.arange(52)
        observation_index[TRUMP + np.array(order)] = TRUMP + np.arange(4)
        action_map = np.concatenate([card_map, ACTION_TRUMP + np.array(order), [ACTION_KNOCK]])
        assert len(action_map) == NUM_ACTIONS
        maps.append((observation_index, action_map))
    return maps


def _mark_trick(obs: np.ndarray, viewer: int, leader: int, cards: Any, part: int) -> None:
    for i, card in enumerate(cards):
        obs[part + ((leader + i - viewer) & 3) * 52 + card] = 1.0


def _write_trick_counters(obs: np.ndarray, viewer: int, game: RingRangGame) -> None:
    """Trick number, pile, streak and lifted counts (they change only when a trick ends)."""
    obs[TRICK_NUMBER : TRICK_NUMBER + NUM_TRICKS] = 0.0
    obs[TRICK_NUMBER + min(game.tricks_played, NUM_TRICKS - 1)] = 1.0
    obs[PILE : PILE + NUM_TRICKS] = 0.0
    obs[PILE + min(game.pile, NUM_TRICKS - 1)] = 1.0
    obs[STREAK : STREAK + NUM_SEATS] = 0.0
    if game.streak >= 0:
        obs[STREAK + ((game.streak - viewer) & 3)] = 1.0
    obs[LIFTED : LIFTED + 2 * (NUM_TRICKS + 1)] = 0.0
    own = viewer & 1
    obs[LIFTED + game.lifted[own]] = 1.0
    obs[LIFTED + NUM_TRICKS + 1 + game.lifted[1 - own]] = 1.0
    obs[FIRST_LIFT] = float(game.lifted_any)


def _write_knocks(obs: np.ndarray, viewer: int, game: RingRangGame) -> None:
    obs[KNOCKS : KNOCKS + 16] = 0.0
    for honour, knocker in enumerate(game.knockers):
        if knocker >= 0:
            obs[KNOCKS + honour * 4 + ((knocker - viewer) & 3)] = 1.0
    obs[KNOCKING_OVER] = float(game.knock_ended)


def _flat_offsets(part: int, stride: int) -> list[np.ndarray]:
    """For each (seat, card): the positions in the flattened (viewer, view) table of ``part`` + that seat's
    relative block + card, in every viewer's view (``stride`` = 52 for the 4 x 52 card tables)."""
    viewers = np.arange(NUM_SEATS)
    return [viewers * OBSERVATION_SIZE + part + ((seat - viewers) & 3) * stride + card
            for seat in range(NUM_SEATS) for card in range(52)]


_PLAYED_AT = _flat_offsets(PLAYED, 52)  # [seat * 52 + card] -> 4 positions (one a viewer)
_PLAY_AT = [np.concatenate(pair) for pair in zip(_PLAYED_AT, _flat_offsets(CURRENT, 52), strict=True)]
_LEAD_AT = [np.arange(NUM_SEATS) * OBSERVATION_SIZE + LEADER + ((seat - np.arange(NUM_SEATS)) & 3)
            for seat in range(NUM_SEATS)]
_TEAM_FIRST = [(viewer & 1, 1 - (viewer & 1)) for viewer in range(NUM_SEATS)]


class Observer:
    """The four views of one game, updated in place after each step (:func:`observe` where a step changes much).

    The views are the rows of one (4, size) table, so that what changes in every view (a card played, the
    trick counters) is one numpy write over precomputed positions rather than one write per view.
    """

    def __init__(self) -> None:
        self.__setstate__({"table": np.zeros((NUM_SEATS, OBSERVATION_SIZE), np.float32)})

    def __getstate__(self) -> dict[str, np.ndarray]:
        return {"table": self.table}  # a pickle or deepcopy of the views would no longer share the table

    def __setstate__(self, state: dict[str, np.ndarray]) -> None:
        self.table = state["table"]
        self._flat = self.table.reshape(-1)
        self.views = list(self.table)

    def rebuild(self, game: RingRangGame) -> None:
        for viewer in range(NUM_SEATS):
            self.table[viewer] = observe(game, viewer)

    @staticmethod
    def before(game: RingRangGame) -> tuple[int, int, int, bool]:
        """What :meth:`after` compares with: call it before the step."""
        return game.to_act, game.round_number, game.tricks_played, game.knock_ended

    def after(self, game: RingRangGame, action: int, before: tuple[int, int, int, bool]) -> None:
        """Bring the views up to date with ``action``, which was taken in the state ``before`` describes."""
        seat, round_number, tricks, knock_ended = before
        if game.round_number != round_number or game.phase != PHASE_PLAY or ACTION_TRUMP <= action < ACTION_KNOCK:
            self.rebuild(game)
        elif action < 52 or ACTION_TURNED <= action < ACTION_DECLARE:
            card = action if action < 52 else action - ACTION_TURNED
            self._play(game, seat, card, action >= ACTION_TURNED, game.tricks_played != tricks)
            if game.knock_ended != knock_ended:
                self.table[:, KNOCKING_OVER] = 1.0
        elif action == ACTION_KNOCK:
            for viewer, obs in enumerate(self.views):
                _write_knocks(obs, viewer, game)
        else:
            for viewer, obs in enumerate(self.views):
                obs[DECLARED + ((seat - viewer) & 3)] = 1.0

    def _play(self, game: RingRangGame, seat: int, card: int, turned: bool, trick_done: bool) -> None:
        """All four views after ``seat`` played ``card``."""
        table = self.table
        table[seat, HAND + card] = 0.0
        if turned:
            table[:, TURNED + card] = 1.0
        if not trick_done:
            self._flat[_PLAY_AT[seat * 52 + card]] = 1.0
            if len(game.trick_cards) == 1:
                self._flat[_LEAD_AT[seat]] = 1.0
            return
        self._flat[_PLAYED_AT[seat * 52 + card]] = 1.0
        # the trick counters, the leader and the current trick (adjacent parts), then pile to first lift
        table[:, TRICK_NUMBER : CURRENT + 4 * 52] = 0.0
        table[:, PILE : FIRST_LIFT + 1] = 0.0
        table[:, TRICK_NUMBER + min(game.tricks_played, NUM_TRICKS - 1)] = 1.0
        table[:, PILE + min(game.pile, NUM_TRICKS - 1)] = 1.0
        if game.streak >= 0:
            self._flat[_LEAD_AT[game.streak] + (STREAK - LEADER)] = 1.0
        lifted = game.lifted
        for viewer, (own, other) in enumerate(_TEAM_FIRST):
            table[viewer, LIFTED + lifted[own]] = 1.0
            table[viewer, LIFTED + NUM_TRICKS + 1 + lifted[other]] = 1.0
        if game.lifted_any:
            table[:, FIRST_LIFT] = 1.0
