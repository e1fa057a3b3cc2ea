"""RING RANG batched in torch: B games stepped at once with array ops (CPU or GPU).

The same game as :mod:`cardenvs.ring_rang.engine` (default options: no signals, no
declarations, no ``stop_when_decided``, no shaping), bound to it by the differential
test ``tests/test_vector_ring_rang.py``; the observation of the seat to act is exactly
the AEC env's vector (:mod:`cardenvs.ring_rang_v0`). ``episode="round"`` (one round,
rewards +-round points) and ``episode="game"`` (rounds to 20 points with chooser
rotation, rewards +-1 at the end) are both supported.

The state is kept per game in absolute seats (``owner[b, card]`` = seat dealt the card,
``played[b, card]``, the current trick by seat, counters), next to every seat's observation
as bytes (``views``, B x 4 x 640): a card or knock updates a few bytes of the four views with
one ``index_fill_``, a trick's end or the trump choice a few more, and a new deal rebuilds the
views of those games densely from the state. The step returns the acting seat's row as float32.
Auto-reset and the trick-end updates select games with ``nonzero`` (host syncs on a GPU).
"""

from __future__ import annotations

from typing import Any

import torch

from cardenvs.ring_rang.engine import (
    ACTION_KNOCK,
    ACTION_TRUMP,
    DEAL_OFFSETS,
    EPISODES,
    FIRST_LIFT_MIN_PILE,
    HONOUR_RANKS,
    LATER_LIFT_MIN_PILE,
    MAX_SCORE,
    NUM_ACTIONS,
    NUM_SEATS,
    NUM_TRICKS,
    PHASE_PLAY,
    PHASE_TRUMP,
    ROUND_POINTS,
    SLAM_POINTS,
    SLAM_POINTS_DEFENDERS,
    TARGET_SCORE,
    TRICKS_TO_WIN,
)
from cardenvs.ring_rang.observation import (
    CHOOSER,
    CURRENT,
    DEALER,
    FIRST_LIFT,
    HAND,
    KNOCKING_OVER,
    KNOCKS,
    LEADER,
    LIFTED,
    OBSERVATION_PARTS,
    OBSERVATION_SIZE,
    PHASE,
    PILE,
    PLAYED,
    SCORES,
    STREAK,
    TRICK_NUMBER,
    TRUMP,
)
from cardenvs.vector.common import check_actions, make_generator, tensor_bytes

__all__ = ["RingRangVectorEnv"]

_NEVER = -2  # the value of a slot no column matches (the parts of the variants)
# Each view has one spare column after the observation: incremental writes that do not apply go there.
_SINK = OBSERVATION_SIZE
_VIEW_SIZE = OBSERVATION_SIZE + 1
ACE_RANK = HONOUR_RANKS[0]  # the knock sequence A, K, Q, J is rank ACE_RANK - honour index

# The values each one-hot column of the observation compares with, in ``_observe``'s order of
# ``values``: (part name, slot per row of the part, number of columns per row).
_SLOTS = {
    "trump": 0, "phase": 1, "trick_number": 2, "pile": 3, "first_lift_done": 4, "knocking_over": 5,
    "lifted": 6, "scores": 8, "trick_leader": 10, "streak_holder": 11, "chooser": 12, "dealer": 13,
    "knocks": 14, "turned": 18, "declared": 18,
}


def _one_hot_columns() -> tuple[torch.Tensor, torch.Tensor]:
    """For every observation column outside the card parts: its value slot and the value it shows."""
    slots: list[int] = []
    values: list[int] = []
    for name, size in OBSERVATION_PARTS:
        if name in ("hand", "current_trick", "played"):
            continue
        slot = _SLOTS[name]
        if name in ("first_lift_done", "knocking_over"):
            slots.append(slot)
            values.append(1)
        elif name in ("turned", "declared"):
            slots += [slot] * size
            values += [-1] * size
        elif name in ("lifted", "scores", "knocks"):
            rows = 4 if name == "knocks" else 2
            width = size // rows
            for row in range(rows):
                slots += [slot + row] * width
                values += list(range(width))
        else:
            slots += [slot] * size
            values += list(range(size))
    return torch.tensor(slots), torch.tensor(values, dtype=torch.int8)


# Per game state: name -> (trailing shape, dtype). Everything in absolute seats.
_STATE: dict[str, tuple[tuple[int, ...], torch.dtype]] = {
    "deck": ((52,), torch.int64),  # this round's deck, top first (kept to replay or inspect a deal)
    "owner": ((52,), torch.int8),  # seat dealt each card this round
    "first_five": ((52,), torch.bool),  # the chooser's first 5 cards (all it sees while choosing)
    "played": ((52,), torch.bool),
    "phase": ((), torch.int64),
    "trump": ((), torch.int64),  # -1 before the choice
    "to_act": ((), torch.int64),
    "chooser": ((), torch.int64),
    "leader": ((), torch.int64),
    "trick": ((NUM_SEATS,), torch.int64),  # card played to the current trick by each seat, -1 none
    "trick_count": ((), torch.int64),
    "best_card": ((), torch.int64),
    "best_seat": ((), torch.int64),
    "tricks_played": ((), torch.int64),
    "pile": ((), torch.int64),
    "streak": ((), torch.int64),  # winner of the last trick while it is on the pile, -1 none
    "lifted_any": ((), torch.bool),
    "lifted": ((2,), torch.int64),
    "next_honour": ((), torch.int64),
    "knock_ended": ((), torch.bool),
    "knockers": ((4,), torch.int64),  # seat that knocked for A, K, Q, J; -1 none
    "scores": ((2,), torch.int64),
    "round_number": ((), torch.int64),
    "given_rounds": ((), torch.int64),  # rounds of this episode dealt from the decks given to reset
    "views": ((NUM_SEATS, _VIEW_SIZE), torch.uint8),  # every seat's observation, kept up to date
}


class RingRangVectorEnv:
    """``batch_size`` RING RANG games stepped together (see the module docstring).

    ``check_actions=False`` skips the legality check of ``step`` (faster; illegal actions
    then give undefined games).
    """

    num_players = NUM_SEATS
    num_actions = NUM_ACTIONS
    observation_size = OBSERVATION_SIZE

    def __init__(
        self,
        batch_size: int,
        *,
        episode: str = "round",
        knocking: bool = True,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        check_actions: bool = True,
    ):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        if not isinstance(knocking, bool):
            raise ValueError(f"knocking must be a bool, got {knocking!r}")
        self.batch_size = batch_size
        self.episode = episode
        self.knocking = knocking
        self.device = torch.device(device)
        self.check_actions = bool(check_actions)
        self.generator = make_generator(self.device, seed)
        dev = self.device
        self._games = torch.arange(batch_size, device=dev)
        self._cards = torch.arange(52, device=dev)
        self._suits = torch.arange(4, device=dev)
        self._deal_offsets = torch.tensor(DEAL_OFFSETS, device=dev)
        self._seats = torch.arange(NUM_SEATS, device=dev)
        self._team_signs = torch.tensor([1.0, -1.0, 1.0, -1.0], device=dev)
        self._seats_int8 = self._seats.to(torch.int8)
        self._column_slot, self._column_value = (t.to(dev) for t in _one_hot_columns())
        self._head_columns = CURRENT - 52  # trump, phase, trick number, leader
        self._view_rows = (self._games * NUM_SEATS).unsqueeze(1) + self._seats  # (B, 4) row of each view
        self._view_rows = self._view_rows * _VIEW_SIZE
        self._never = torch.full((1, 1), _NEVER, dtype=torch.int64, device=dev)
        for name, (shape, dtype) in _STATE.items():
            setattr(self, name, torch.zeros((batch_size, *shape), dtype=dtype, device=dev))
        self.given_decks: torch.Tensor | None = None  # (B, R, 52) decks of the rounds of this episode
        self._mask = torch.zeros(batch_size, NUM_ACTIONS, dtype=torch.bool, device=dev)
        self._ready = False

    # ------------------------------------------------------------------ API
    def reset(
        self,
        seed: int | None = None,
        decks: torch.Tensor | None = None,
        choosers: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Start every game afresh. ``decks``: (B, 52) card indices top first, or (B, R, 52) one per
        round (``episode="game"``; later rounds are shuffled); ``choosers``: (B,) first choosers.
        Missing ones are drawn from the env's Generator (``seed`` reseeds it)."""
        batch = self.batch_size
        given = self._check_decks(decks) if decks is not None else None
        if choosers is not None:
            choosers = self._check_choosers(choosers)
        if seed is not None:
            self.generator = make_generator(self.device, seed)
        if choosers is None:
            choosers = torch.randint(0, NUM_SEATS, (batch,), generator=self.generator, device=self.device)
        self.given_decks = given
        self.scores.zero_()
        self.round_number.zero_()
        self.given_rounds.fill_(0 if given is None else given.shape[1])
        first = given[:, 0] if given is not None else self._shuffled_decks(batch)
        self._start_rounds(self._games, first, choosers)
        self._rebuild_views(self._games)
        self._ready = True
        return self._outputs()[:3]

    def step(
        self, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Apply one action per game; finished games restart (see the module docstring)."""
        if not self._ready:
            raise RuntimeError("step() before reset()")
        if self.check_actions:
            actions = check_actions(actions, self._mask)
        else:
            actions = actions.to(device=self.device, dtype=torch.int64)
        rewards, done = self._apply(actions)
        obs, mask, info = self._outputs()
        return obs, mask, rewards, done, info

    hidden_size = (NUM_SEATS - 1) * 52  # width of hidden_cards()

    def hidden_cards(self, seat: torch.Tensor) -> torch.Tensor:
        """(B, 3 * 52) float: the cards the other seats still hold, seat+1, seat+2, seat+3 in that order
        (before the trump choice: the cards of this deal they are dealt).

        What ``seat`` cannot see (a trainer's critic may use it: training only, never an agent's observation).
        """
        relative = (self.owner.long() - seat.unsqueeze(1)) % NUM_SEATS  # (B, 52)
        held = torch.zeros(self.batch_size, NUM_SEATS, 52, device=self.device)
        held.scatter_(1, relative.unsqueeze(1), (~self.played).unsqueeze(1).float())
        return held[:, 1:].flatten(1)

    def memory_bytes_per_game(self) -> int:
        """Bytes of state per game plus one step's outputs (observation, mask, rewards, done)."""
        state = tensor_bytes(*(getattr(self, name) for name in _STATE))
        if self.given_decks is not None:
            state += tensor_bytes(self.given_decks)
        outputs = 4 * OBSERVATION_SIZE + NUM_ACTIONS + 4 * NUM_SEATS + 1 + 8
        return state // self.batch_size + outputs

    def state_dict(self) -> dict[str, Any]:
        """A snapshot of every array (copies) and of the Generator; :meth:`load_state_dict` restores it."""
        data: dict[str, Any] = {name: getattr(self, name).clone() for name in _STATE}
        data["given_decks"] = None if self.given_decks is None else self.given_decks.clone()
        data["generator"] = self.generator.get_state()
        data["settings"] = {"batch_size": self.batch_size, "episode": self.episode, "knocking": self.knocking}
        data["ready"] = self._ready
        return data

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` of an env with the same settings; ValueError if it does not fit."""
        settings = {"batch_size": self.batch_size, "episode": self.episode, "knocking": self.knocking}
        if not isinstance(data, dict) or data.get("settings") != settings:
            raise ValueError(f"state_dict settings {data.get('settings') if isinstance(data, dict) else None} "
                             f"do not match this env's {settings}")
        for name, (shape, dtype) in _STATE.items():
            value = data.get(name)
            if not isinstance(value, torch.Tensor) or value.shape != (self.batch_size, *shape) or value.dtype != dtype:
                raise ValueError(f"state_dict field {name!r} must be a {dtype} tensor of shape "
                                 f"{(self.batch_size, *shape)}")
        decks = data.get("given_decks")
        if decks is not None and (not isinstance(decks, torch.Tensor) or decks.shape[0] != self.batch_size):
            raise ValueError("state_dict field 'given_decks' must be None or a (B, R, 52) tensor")
        if decks is not None and (decks.dim() != 3 or decks.shape[2] != 52 or decks.dtype != torch.int64):
            raise ValueError("state_dict field 'given_decks' must be None or a (B, R, 52) int64 tensor")
        saved = {name: getattr(self, name) for name in _STATE}
        for name in _STATE:
            setattr(self, name, data[name].to(self.device).clone())
        try:
            if decks is not None:
                self._check_decks(decks.reshape(-1, 52).to(self.device))
            if data.get("ready", True):  # before reset() the arrays hold no game yet
                self._check_values()
        except ValueError:
            for name, value in saved.items():
                setattr(self, name, value)
            raise
        self.given_decks = None if decks is None else decks.to(self.device).clone()
        self.generator.set_state(data["generator"])
        self._ready = bool(data.get("ready", True))
        if self._ready:
            self._mask = self._acting_mask(self._acting_rows())

    def _check_values(self) -> None:
        """Every game of a loaded state is one the rules can reach: a deck dealt from the chooser, the trick,
        the counters and the knocks in range and in agreement, the views those of the state (a value out of
        range crashed the next step; one in range but wrong ran on silently)."""

        def require(name: str, ok: torch.Tensor) -> None:
            ok = ok.reshape(self.batch_size, -1).all(1)
            if not bool(ok.all()):
                game = int((~ok).nonzero()[0])
                raise ValueError(f"state_dict field {name!r}: game {game} holds a value the rules cannot reach")

        def within(name: str, low: int, high: int) -> None:
            value = getattr(self, name)
            require(name, (value >= low) & (value <= high))

        require("deck", self.deck.sort(1).values == self._cards)
        for name, (low, high) in {"chooser": (0, 3), "to_act": (0, 3), "leader": (0, 3), "phase": (0, 1),
                                  "trick": (-1, 51), "trick_count": (0, 3), "best_card": (-1, 51),
                                  "best_seat": (-1, 3), "tricks_played": (0, NUM_TRICKS - 1), "streak": (-1, 3),
                                  "pile": (0, NUM_TRICKS), "lifted": (0, NUM_TRICKS), "next_honour": (0, 4),
                                  "knockers": (-1, 3), "scores": (0, 2**40), "round_number": (0, 2**40),
                                  "given_rounds": (0, 2**40)}.items():  # fmt: skip
            within(name, low, high)
        seats = (self.chooser.unsqueeze(1) + self._deal_offsets) & 3
        require("owner", self.owner == torch.empty_like(self.deck).scatter_(1, self.deck, seats).to(torch.int8))
        require("first_five", self.first_five == torch.zeros_like(self.played).scatter_(1, self.deck[:, :5], True))
        choosing = self.phase == PHASE_TRUMP
        require("trump", torch.where(choosing, self.trump == -1, (self.trump >= 0) & (self.trump <= 3)))
        require("phase", ~choosing | ((self.to_act == self.chooser) & (self.tricks_played == 0)
                                      & ~self.played.any(1) & (self.trick_count == 0)))  # fmt: skip
        in_trick = self.trick >= 0
        positions = (self._seats - self.leader.unsqueeze(1)) & 3
        require("trick", in_trick == (positions < self.trick_count.unsqueeze(1)))
        card = self.trick.clamp(min=0)
        require("trick", ~in_trick | ((self.owner.gather(1, card).long() == self._seats) & self.played.gather(1, card)))
        require("to_act", choosing | (self.to_act == (self.leader + self.trick_count) & 3))
        require("played", self.played.sum(1) == 4 * self.tricks_played + self.trick_count)
        require("lifted", self.lifted.sum(1) + self.pile == self.tricks_played)
        views = self._dense_views(self._games.repeat_interleave(NUM_SEATS), self._seats.repeat(self.batch_size))
        require("views", self.views[:, :, :OBSERVATION_SIZE] == views.view(self.batch_size, NUM_SEATS, -1))

    # --------------------------------------------------------------- checks
    def _check_decks(self, decks: torch.Tensor) -> torch.Tensor:
        if not isinstance(decks, torch.Tensor) or decks.dtype.is_floating_point or decks.dtype == torch.bool:
            raise ValueError("decks must be an integer torch.Tensor of card indices")
        if decks.dim() == 2:
            decks = decks.unsqueeze(1)
        if decks.dim() != 3 or decks.shape[0] != self.batch_size or decks.shape[2] != 52 or decks.shape[1] < 1:
            raise ValueError(f"decks must have shape ({self.batch_size}, 52) or ({self.batch_size}, R, 52), "
                             f"got {tuple(decks.shape)}")
        decks = decks.to(device=self.device, dtype=torch.int64)
        complete = (decks.sort(dim=2).values == self._cards).all(dim=2)
        if not bool(complete.all()):
            bad = (~complete).nonzero()[:5].tolist()
            raise ValueError(f"decks must be permutations of 0..51; not so for (game, round) {bad}")
        return decks

    def _check_choosers(self, choosers: torch.Tensor) -> torch.Tensor:
        if not isinstance(choosers, torch.Tensor) or choosers.dtype.is_floating_point or choosers.dtype == torch.bool:
            raise ValueError("choosers must be an integer torch.Tensor of seats 0..3")
        if choosers.shape != (self.batch_size,):
            raise ValueError(f"choosers must have shape ({self.batch_size},), got {tuple(choosers.shape)}")
        choosers = choosers.to(device=self.device, dtype=torch.int64)
        if not bool(((choosers >= 0) & (choosers < NUM_SEATS)).all()):
            raise ValueError("choosers must be seats 0..3")
        return choosers

    # ---------------------------------------------------------- transitions
    def _shuffled_decks(self, count: int) -> torch.Tensor:
        noise = torch.rand(count, 52, generator=self.generator, device=self.device)
        return noise.argsort(dim=1)

    def _start_rounds(self, games: torch.Tensor, decks: torch.Tensor, choosers: torch.Tensor) -> None:
        """Deal a new round in ``games`` (index tensor): the chooser holds its first 5 cards."""
        seat_of_position = (choosers.unsqueeze(1) + self._deal_offsets) & 3
        count = len(games)
        self.deck[games] = decks
        self.owner[games] = torch.empty_like(decks).scatter_(1, decks, seat_of_position).to(torch.int8)
        first_five = torch.zeros(count, 52, dtype=torch.bool, device=self.device)
        self.first_five[games] = first_five.scatter_(1, decks[:, :5], True)
        self.played[games] = False
        self.phase[games] = PHASE_TRUMP
        self.trump[games] = -1
        self.to_act[games] = choosers
        self.chooser[games] = choosers
        self.leader[games] = choosers
        self.trick[games] = -1
        self.trick_count[games] = 0
        self.best_card[games] = -1
        self.best_seat[games] = -1
        self.tricks_played[games] = 0
        self.pile[games] = 0
        self.streak[games] = -1
        self.lifted_any[games] = False
        self.lifted[games] = 0
        self.next_honour[games] = 0
        self.knock_ended[games] = not self.knocking
        self.knockers[games] = -1

    def _honour_card(self) -> torch.Tensor:
        """The card of the next honour to knock for (meaningful while knocking is open)."""
        return (self.trump.clamp(min=0) * 13 + ACE_RANK - self.next_honour.clamp(max=3))

    def _apply(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        games = self._games
        seat = self.to_act
        choosing = self.phase == PHASE_TRUMP
        knock = actions == ACTION_KNOCK
        play = actions < 52
        card = actions.clamp(max=51)
        knock_ended_before = self.knock_ended
        trick_before, leader_before = self.trick.clone(), self.leader

        # Trump choice: the rest of the deck is dealt (``owner`` already holds the whole deal).
        self.trump = torch.where(choosing, actions - ACTION_TRUMP, self.trump)
        self.phase = self.phase | choosing  # PHASE_TRUMP = 0 -> PHASE_PLAY = 1

        # Knock for the next honour; knocking ends after J or when the next honour is gone.
        honour = self.next_honour.clamp(max=3)
        self.knockers[games, honour] = torch.where(knock, seat, self.knockers[games, honour])
        self.next_honour = self.next_honour + knock
        next_gone = self.played[games, self._honour_card()]
        knock_ended = knock_ended_before | (knock & ((self.next_honour == 4) | next_gone))

        # Play a card: follow the trick's best, end knocking if the next honour goes unknocked.
        self.knock_ended = knock_ended | (play & (card == self._honour_card()))
        self.played[games, card] |= play
        self.trick[games, seat] = torch.where(play, card, self.trick[games, seat])
        lead = play & (self.trick_count == 0)
        suit = card // 13
        best_suit = self.best_card // 13
        beats = ((suit == best_suit) & (card > self.best_card)) | ((suit == self.trump) & (best_suit != self.trump))
        takes = play & (lead | beats)
        self.best_card = torch.where(takes, card, self.best_card)
        self.best_seat = torch.where(takes, seat, self.best_seat)
        self.leader = torch.where(lead, seat, self.leader)
        self.trick_count = self.trick_count + play
        self.to_act = torch.where(play, (seat + 1) & 3, seat)

        # Trick end: the winner puts it on the pile and lifts when the rules allow.
        done_trick = self.trick_count == 4
        zeros, ones = self._observe_action(seat, card, play, lead & ~done_trick, knock, honour, knock_ended_before,
                                           done_trick)
        counters_before = (self.tricks_played, self.pile, self.streak, self.lifted.clone())
        winner = self.best_seat
        self.tricks_played = self.tricks_played + done_trick
        pile = self.pile + done_trick
        needed = torch.where(self.lifted_any, LATER_LIFT_MIN_PILE, FIRST_LIFT_MIN_PILE)
        lift = done_trick & ((self.tricks_played == NUM_TRICKS) | ((self.streak == winner) & (pile >= needed)))
        self.lifted.scatter_add_(1, (winner & 1).clamp(min=0).unsqueeze(1), (pile * lift).unsqueeze(1))
        self.pile = torch.where(lift, 0, pile)
        self.lifted_any |= lift
        self.streak = torch.where(done_trick, torch.where(lift, -1, winner), self.streak)
        self.trick.masked_fill_(done_trick.unsqueeze(1), -1)
        self.trick_count = torch.where(done_trick, 0, self.trick_count)
        self.to_act = torch.where(done_trick, winner, self.to_act)
        self.leader = torch.where(done_trick, winner, self.leader)

        # Round end: TRICKS_TO_WIN lifted tricks win ROUND_POINTS; all 13 win SLAM_POINTS (chooser's team)
        # or SLAM_POINTS_DEFENDERS (the engine's round_points).
        round_over = done_trick & (self.tricks_played == NUM_TRICKS)
        ended_tricks = (done_trick & ~round_over).nonzero().squeeze(1)
        if len(ended_tricks):
            zeros, ones = self._observe_trick_end(ended_tricks, trick_before, leader_before, counters_before,
                                                  zeros, ones)
        self._fill_views(zeros, ones)
        team = (self.lifted[:, 0] < TRICKS_TO_WIN).long()
        slam = self.lifted.gather(1, team.unsqueeze(1)).squeeze(1) == NUM_TRICKS
        points = torch.where(slam, torch.where(team == (self.chooser & 1), SLAM_POINTS, SLAM_POINTS_DEFENDERS),
                             ROUND_POINTS)
        sign = 1 - 2 * team
        if self.episode == "round":
            done = round_over
            value = sign * points * round_over
        else:
            self.scores.scatter_add_(1, team.unsqueeze(1), (points * round_over).unsqueeze(1))
            done = round_over & (self.scores.gather(1, team.unsqueeze(1)).squeeze(1) >= TARGET_SCORE)
            value = sign * done
            next_round = round_over & ~done
            if bool(next_round.any()):
                self._next_rounds(next_round.nonzero().squeeze(1), team)
        rewards = value.unsqueeze(1).to(torch.float32) * self._team_signs
        if bool(done.any()):
            self._new_episodes(done.nonzero().squeeze(1))
        chosen = choosing.nonzero().squeeze(1)
        if len(chosen):
            self._observe_trump_choice(chosen)
        dealt = round_over.nonzero().squeeze(1)
        if len(dealt):
            self._observe_deal(dealt)
        return rewards, done

    # ------------------------------------------------- incremental views
    def _relative(self, seats: torch.Tensor) -> torch.Tensor:
        """(n, 4): ``seats`` (n,) as seen by viewers 0..3 (0 self, 1 left, 2 partner, 3 right)."""
        return (seats.unsqueeze(1) - self._seats) & 3

    def _observe_action(
        self,
        seat: torch.Tensor,
        card: torch.Tensor,
        play: torch.Tensor,
        lead: torch.Tensor,
        knock: torch.Tensor,
        honour: torch.Tensor,
        knock_ended_before: torch.Tensor,
        done_trick: torch.Tensor,
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """The view bytes to clear and to set for this step's card or knock (the trick's end: below)."""
        rows = self._view_rows  # (B, 4) first flat index of each viewer's vector
        rel = self._relative(seat)
        card_column = card.unsqueeze(1)
        ones = [
            torch.where(play.unsqueeze(1), rows + (PLAYED + card_column) + rel * 52, rows + _SINK),
            torch.where((play & ~done_trick).unsqueeze(1), rows + (CURRENT + card_column) + rel * 52, rows + _SINK),
        ]
        # Rare events: only the games concerned (boolean selection).
        newly_over = self.knock_ended & ~knock_ended_before
        ones += [(rows + LEADER + rel)[lead], (rows + (KNOCKS + honour.unsqueeze(1) * 4) + rel)[knock],
                 rows[newly_over] + KNOCKING_OVER]
        gone = torch.where(play, rows.gather(1, seat.unsqueeze(1)).squeeze(1) + card, rows[:, 0] + _SINK)
        return [gone], ones

    def _observe_trick_end(
        self,
        games: torch.Tensor,
        trick_before: torch.Tensor,
        leader_before: torch.Tensor,
        counters_before: tuple[torch.Tensor, ...],
        zeros: list[torch.Tensor],
        ones: list[torch.Tensor],
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """In ``games`` a trick (not the last) just ended: clear the table, move the counters.

        Extends the bytes to clear and to set of :meth:`_observe_action` (which touches other
        columns of these games: the trick's last card is never shown on the table)."""
        tricks_before, pile_before, streak_before, lifted_before = (c[games] for c in counters_before)
        rows = self._view_rows[games]
        sink = rows + _SINK
        viewer_team = self._seats & 1  # (4,)

        def counters(tricks, pile, streak, lifted):
            lifted_columns = LIFTED + 14 * (torch.arange(2, device=self.device).view(1, 1, 2)
                                            != viewer_team.view(1, 4, 1)) + lifted.unsqueeze(1)
            return [
                rows + TRICK_NUMBER + tricks.clamp(max=12).unsqueeze(1),
                rows + PILE + pile.clamp(max=12).unsqueeze(1),
                torch.where((streak >= 0).unsqueeze(1), rows + STREAK + self._relative(streak), sink),
                (rows.unsqueeze(2) + lifted_columns).view(len(games), -1),
            ]

        trick = trick_before[games]  # (n, 4) by absolute seat; the trick's last card was never shown
        trick_columns = CURRENT + ((self._seats.view(1, 1, 4) - self._seats.view(1, 4, 1)) & 3) * 52
        current = torch.where((trick >= 0).unsqueeze(1), rows.unsqueeze(2) + trick_columns + trick.unsqueeze(1),
                              sink.unsqueeze(2))
        zeros = zeros + [current, rows + LEADER + self._relative(leader_before[games]),
                         *counters(tricks_before, pile_before, streak_before, lifted_before)]
        ones = ones + [torch.where(self.lifted_any[games].unsqueeze(1), rows + FIRST_LIFT, sink),
                       *counters(self.tricks_played[games], self.pile[games], self.streak[games], self.lifted[games])]
        return zeros, ones

    def _fill_views(self, zeros: list[torch.Tensor], ones: list[torch.Tensor]) -> None:
        """Clear the view bytes at the flat indices ``zeros``, then set those at ``ones``."""
        flat = self.views.view(-1)
        for indices, value in ((zeros, 0), (ones, 1)):
            if indices:
                flat.index_fill_(0, torch.cat([part.reshape(-1) for part in indices]), value)

    def _observe_trump_choice(self, games: torch.Tensor) -> None:
        """In ``games`` trump was just chosen: every seat sees its whole hand, the trump, the play phase."""
        rows = self._view_rows[games]
        hands = rows.gather(1, self.owner[games].long()) + HAND + self._cards  # each card in its owner's view
        trump = rows + TRUMP + self.trump[games].unsqueeze(1)
        self._fill_views([rows + PHASE + PHASE_TRUMP], [hands, rows + PHASE + PHASE_PLAY, trump])

    def _observe_deal(self, games: torch.Tensor) -> None:
        """In ``games`` a round was just dealt: the views of a fresh deal, written directly.

        (What :meth:`_dense_views` gives right after ``_start_rounds``, at a fraction of its
        cost; the differential test checks the two agree.) Every view shows: phase trump, no
        trick, empty pile, 0 tricks lifted per team, the scores, chooser and dealer; the chooser's
        view also its first five cards.
        """
        rows = self._view_rows[games]
        self.views[games] = 0
        own = self._seats & 1
        scores = self.scores[games].clamp(max=MAX_SCORE)  # (n, 2) by team
        chooser = self.chooser[games]
        ones = [
            rows + PHASE + PHASE_TRUMP, rows + TRICK_NUMBER, rows + PILE, rows + LIFTED, rows + (LIFTED + 14),
            rows + SCORES + scores[:, own], rows + (SCORES + MAX_SCORE + 1) + scores[:, 1 - own],
            rows + CHOOSER + self._relative(chooser), rows + DEALER + self._relative(chooser + 3),
            rows.gather(1, chooser.unsqueeze(1)) + HAND + self.deck[games, :5],
        ]
        if not self.knocking:
            ones.append(rows + KNOCKING_OVER)
        self._fill_views([], ones)

    def _rebuild_views(self, games: torch.Tensor) -> None:
        """All four views of ``games`` from the state (at reset)."""
        viewers = self._seats.repeat(len(games))
        self.views[games, :, :OBSERVATION_SIZE] = self._dense_views(games.repeat_interleave(NUM_SEATS), viewers).view(
            len(games), NUM_SEATS, OBSERVATION_SIZE)

    def _next_rounds(self, games: torch.Tensor, team: torch.Tensor) -> None:
        """Game mode: the next round, chooser's partner after a win, left neighbour after a loss."""
        chooser = self.chooser[games]
        won = team[games] == (chooser & 1)
        choosers = torch.where(won, chooser + 2, chooser + 1) & 3
        rounds = self.round_number[games] + 1
        self.round_number[games] = rounds
        decks = self._shuffled_decks(len(games))
        if self.given_decks is not None:
            from_given = rounds < self.given_rounds[games]
            given = self.given_decks[games, rounds.clamp(max=self.given_decks.shape[1] - 1)]
            decks = torch.where(from_given.unsqueeze(1), given, decks)
        self._start_rounds(games, decks, choosers)

    def _new_episodes(self, games: torch.Tensor) -> None:
        """Finished games restart with fresh decks and choosers from the Generator."""
        count = len(games)
        choosers = torch.randint(0, NUM_SEATS, (count,), generator=self.generator, device=self.device)
        self.scores[games] = 0
        self.round_number[games] = 0
        self.given_rounds[games] = 0
        self._start_rounds(games, self._shuffled_decks(count), choosers)

    # ----------------------------------------------------------- observation
    def _acting_rows(self) -> torch.Tensor:
        """(B, OBSERVATION_SIZE) uint8: the view of the seat to act in each game."""
        rows = self.views.view(-1, _VIEW_SIZE)[:, :OBSERVATION_SIZE]
        return rows.index_select(0, self._games * NUM_SEATS + self.to_act)

    def _acting_mask(self, rows: torch.Tensor) -> torch.Tensor:
        """The legal actions from the acting seats' views: in the play phase a view's hand part
        is the whole hand (while choosing trump only the 4 trump actions are legal)."""
        return self._legal_mask(rows[:, HAND : HAND + 52].bool())

    def _legal_mask(self, hand: torch.Tensor) -> torch.Tensor:
        """(B, NUM_ACTIONS): follow the led suit if you can; trump actions while choosing; knock
        while holding the next honour. Suits are handled as (B, 4) rows to keep the work small."""
        batch = self.batch_size
        playing = self.phase == PHASE_PLAY
        by_suit = hand.view(batch, 4, 13)
        led_suit = self.trick.gather(1, self.leader.unsqueeze(1)) // 13  # (B, 1); -1 with no card led
        is_led = self._suits == led_suit  # (B, 4), all False with no card led
        follow = (is_led & by_suit.any(dim=2)).any(dim=1, keepdim=True)
        suits = (is_led | ~follow) & playing.unsqueeze(1)
        allowed = (by_suit & suits.unsqueeze(2)).view(batch, 52)
        can_knock = playing & ~self.knock_ended & hand.gather(1, self._honour_card().unsqueeze(1)).squeeze(1)
        return torch.cat([allowed, (~playing).unsqueeze(1).expand(batch, 4), can_knock.unsqueeze(1)], dim=1)

    def _dense_views(self, games: torch.Tensor, viewers: torch.Tensor) -> torch.Tensor:
        """(n, OBSERVATION_SIZE) the AEC observation of ``viewers`` in ``games`` (index tensors).

        Built densely as bytes: the card parts by comparison with the viewer-relative seats,
        every other part by one gather of the per-game values each column is a one-hot of.
        """
        batch = len(games)
        seat = viewers
        seat_column = seat.unsqueeze(1)
        state = {name: getattr(self, name)[games] for name in _STATE if name not in ("views", "deck")}
        owner, played_cards = state["owner"], state["played"]
        playing = state["phase"] == PHASE_PLAY
        # While choosing, the chooser sees its first 5 cards only (the rest is not dealt yet).
        hand = (owner == seat_column) & ~played_cards
        visible = hand & (playing.unsqueeze(1) | state["first_five"])
        played_by = torch.where(played_cards, (owner - seat_column.to(torch.int8)) & 3, NUM_SEATS)
        played = played_by.unsqueeze(1) == self._seats_int8.view(1, NUM_SEATS, 1)
        trick = state["trick"].gather(1, (seat_column + self._seats) & 3)  # by relative seat
        current = trick.unsqueeze(2) == self._cards

        absent = state["trick_count"] == 0
        seats = torch.stack([state["leader"].masked_fill(absent, -1), state["streak"], state["chooser"],
                             state["chooser"] + 3], dim=1)
        seats = torch.cat([seats, state["knockers"]], dim=1)
        relative = ((seats - seat_column) & 3).masked_fill_(seats < 0, -1)
        own = seat_column & 1
        teams = torch.cat([own, 1 - own], dim=1)
        values = torch.cat(
            [
                torch.stack([state["trump"], state["phase"], state["tricks_played"].clamp(max=12),
                             state["pile"].clamp(max=12), state["lifted_any"].long(), state["knock_ended"].long()],
                            dim=1),
                state["lifted"].gather(1, teams),
                state["scores"].gather(1, teams).clamp(max=MAX_SCORE),
                relative,
                self._never.expand(batch, 1),
            ],
            dim=1,
        ).to(torch.int8)
        onehots = values.index_select(1, self._column_slot) == self._column_value
        head, tail = onehots[:, : self._head_columns], onehots[:, self._head_columns :]
        parts = [visible, head, current.view(batch, -1), played.view(batch, -1), tail]
        return torch.cat(parts, dim=1).view(torch.uint8)

    def _outputs(self) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        rows = self._acting_rows()
        self._mask = self._acting_mask(rows)
        return rows.to(torch.float32), self._mask.clone(), {"seat": self.to_act.clone()}
