"""Rang, batched in torch: B deals (or matches) stepped at once, the same game as ``cardenvs.rang_v0``.

The rules are those of ``docs/rang.md`` as the reference engine ``cardenvs.rang.engine`` implements them;
this is the unavoidable second implementation for speed, bound to the engine by the differential test
``tests/test_vector_rang.py`` (same decks, same actions: same masks, observations, rewards and endings).
Rule tables (playable kinds, card points, the deck) are imported from the engine, not restated.

Layout (one row per game, no Python loop over the batch):

- hands and own discards as counts per kind, ``(B, N, 14)``. Suits play no part in Rang, in the rules or in
  any observation, so which card of a rank leaves the hand (the engine's "lowest card index") cannot change
  anything observable; kinds are all the state needs.
- stock, discard pile and play pile as ordered kind sequences ``(B, D + 1)`` with lengths (stock top last,
  as in the engine), so a stock rebuild shuffles ``discard + pile[:-1]`` exactly as the engine does.
- one pass of a step is vector operations over the whole batch; the rare, awkward parts (the chain of
  automatic draws and passes after a turn, the draw 2 of an answered going out, stock rebuilds) are
  repeated masked sub-steps over the games still in that situation.

Shuffles use the env's ``torch.Generator``. ``_permutation_hook`` (None by default) is a testing seam: a
callable ``(purpose, rows, lengths) -> (S, L) int64`` giving the permutations for new episodes
(``"episode"``), later deals of a match (``"deal"``) and stock rebuilds (``"rebuild"``), so the differential
test can reproduce the reference env's numpy shuffles and compare whole deals, rebuilds included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..rang.engine import (
    DECK_54,
    DECK_108,
    DEFAULT_MAX_TURNS_PER_DEAL,
    DISCARD_OFFSET,
    ELIMINATION_TOTAL,
    HAND_SIZE,
    JOKER_KIND,
    KIND_POINTS,
    NUM_ACTIONS,
    NUM_KINDS,
    PLAYABLE_ON,
    deck_size_for,
    kind_of,
)
from ..rang_v0 import FIXED_SIZE
from .common import check_actions, make_generator

__all__ = ["RangVectorEnv"]

PLAY, PLAY_AFTER_JOKER, DISCARD = 0, 1, 2
NOBODY = -1

PermutationHook = Callable[[str, torch.Tensor, torch.Tensor], torch.Tensor]

# Per-game state tensors (name -> what it is); state_dict() saves exactly these.
STATE_FIELDS = (
    "hands",  # (B, N, 14) int8: cards per kind in each hand
    "hand_size",  # (B, N) int64
    "own_discards",  # (B, N, 14) int8: own discards this deal per kind
    "stock",  # (B, D + 1) int8: kinds, top card at stock_len - 1
    "stock_len",  # (B,) int64
    "discard",  # (B, D + 1) int8: kinds in the order discarded
    "discard_len",  # (B,) int64
    "pile",  # (B, D + 1) int8: kinds in the order played (start card first), top at pile_len - 1
    "pile_len",  # (B,) int64
    "pile_counts",  # (B, 14) int8: play pile per kind
    "top",  # (B,) int64: kind of the top card
    "phase",  # (B,) int64: PLAY, PLAY_AFTER_JOKER, DISCARD
    "current",  # (B,) int64: seat to act
    "out_seat",  # (B,) int64: seat that went out and awaits the answer, -1 none
    "turns",  # (B,) int64: turns of this deal
    "dealer",  # (B,) int64
    "first_dealer",  # (B,) int64: dealer of the first deal of each new episode
    "big_deck",  # (B,) bool: this deal uses 108 cards
    "alive",  # (B, N) bool: players still in the match
    "totals",  # (B, N) int64: match totals
)


class RangVectorEnv:
    """``batch_size`` Rang games stepped at once (see the module docstring).

    ``reset`` and ``step`` return the observation and legal mask of the seat to act in every game; finished
    games start a new episode at once (auto-reset), so every row always has a decision to make.
    """

    num_actions = NUM_ACTIONS

    def __init__(
        self,
        batch_size: int,
        *,
        num_players: int = 4,
        episode: str = "deal",
        device: str | torch.device = "cpu",
        seed: int | None = None,
        max_turns_per_deal: int = DEFAULT_MAX_TURNS_PER_DEAL,
        check_actions: bool = True,
    ):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if isinstance(num_players, bool) or not isinstance(num_players, int) or not 2 <= num_players <= 10:
            raise ValueError(f"num_players must be an int in 2..10, got {num_players!r}")
        if episode not in ("deal", "match"):
            raise ValueError(f"episode must be 'deal' or 'match', got {episode!r}")
        if isinstance(max_turns_per_deal, bool) or not isinstance(max_turns_per_deal, int) or max_turns_per_deal < 1:
            raise ValueError(f"max_turns_per_deal must be a positive int, got {max_turns_per_deal!r}")
        self.batch_size = batch_size
        self.num_players = n = num_players
        self.episode = episode
        self.device = dev = torch.device(device)
        self.max_turns_per_deal = max_turns_per_deal
        self.check_actions = check_actions
        self.observation_size = FIXED_SIZE + 5 * n
        self.generator = make_generator(dev, seed)
        self._permutation_hook: PermutationHook | None = None

        # The largest deck this env can deal: 108 only while 5 or more players are in.
        self.max_deck = deck_size_for(n)
        width = self.max_deck + 1
        # Constant tables, all from the engine.
        self._playable = torch.tensor(
            [[bool(PLAYABLE_ON[top] >> k & 1) for k in range(NUM_KINDS)] for top in range(NUM_KINDS)], device=dev
        )
        self._points = torch.tensor(KIND_POINTS, dtype=torch.int64, device=dev)
        self._deck_kinds = {
            size: torch.tensor([kind_of(c) for c in deck], dtype=torch.int8, device=dev)
            for size, deck in ((54, DECK_54), (108, DECK_108))
        }
        # Observation scalars exactly as the AEC env computes them (float64, then float32).
        self._size_fraction = torch.tensor(
            [[k * (1.0 / size) for k in range(109)] for size in (54, 108)], dtype=torch.float64, device=dev
        ).float()
        self._total_fraction = torch.tensor(
            [t * 0.01 if t < 100 else 1.0 for t in range(101)], dtype=torch.float64, device=dev
        ).float()
        self._kind_eye = torch.eye(NUM_KINDS, device=dev)
        self._phase_eye = torch.eye(3, device=dev)
        self._seat_eye = torch.cat([torch.eye(n, device=dev), torch.zeros(1, n, device=dev)])  # row n: nobody
        self._rows = torch.arange(batch_size, device=dev)
        self._seat_offsets = torch.arange(n, device=dev)

        b = batch_size
        small = dict(dtype=torch.int8, device=dev)
        big = dict(dtype=torch.int64, device=dev)
        self.hands = torch.zeros(b, n, NUM_KINDS, **small)
        self.hand_size = torch.zeros(b, n, **big)
        self.own_discards = torch.zeros(b, n, NUM_KINDS, **small)
        self.stock = torch.zeros(b, width, **small)
        self.stock_len = torch.zeros(b, **big)
        self.discard = torch.zeros(b, width, **small)
        self.discard_len = torch.zeros(b, **big)
        self.pile = torch.zeros(b, width, **small)
        self.pile_len = torch.zeros(b, **big)
        self.pile_counts = torch.zeros(b, NUM_KINDS, **small)
        self.top = torch.zeros(b, **big)
        self.phase = torch.zeros(b, **big)
        self.current = torch.zeros(b, **big)
        self.out_seat = torch.full((b,), NOBODY, **big)
        self.turns = torch.zeros(b, **big)
        self.dealer = torch.zeros(b, **big)
        self.first_dealer = torch.zeros(b, **big)
        self.big_deck = torch.zeros(b, dtype=torch.bool, device=dev)
        self.alive = torch.ones(b, n, dtype=torch.bool, device=dev)
        self.totals = torch.zeros(b, n, **big)
        self._has_reset = False
        self._mask = torch.zeros(b, NUM_ACTIONS, dtype=torch.bool, device=dev)

    # ------------------------------------------------------------------ API
    def reset(
        self,
        seed: int | None = None,
        decks: torch.Tensor | None = None,
        dealers: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Start a new episode in every game.

        ``decks``: (B, 54) or (B, 108) card indices (0..52), top card first, dealt exactly as the AEC env's
        ``options={"deck": ...}``; None shuffles. ``dealers``: (B,) first dealers (default seat 0); later
        auto-resets keep each game's first dealer.
        """
        b, n = self.batch_size, self.num_players
        first_size = deck_size_for(n)
        deck_kinds = None
        if decks is not None:
            decks = torch.as_tensor(decks, device=self.device)
            if decks.shape != (b, first_size) or decks.is_floating_point() or decks.dtype == torch.bool:
                raise ValueError(
                    f"decks must be an integer tensor of shape ({b}, {first_size}), got {tuple(decks.shape)} "
                    f"{decks.dtype}"
                )
            decks = decks.long()
            if ((decks < 0) | (decks > 52)).any():
                raise ValueError("decks hold card indices 0..52")
            expected = torch.tensor(sorted(DECK_54 if first_size == 54 else DECK_108), device=self.device)
            wrong = (decks.sort(1).values != expected).any(1)
            if wrong.any():
                raise ValueError(
                    f"decks at batch indices {wrong.nonzero().flatten().tolist()} are not {first_size}-card Rang decks"
                )
            deck_kinds = torch.where(decks == 52, JOKER_KIND, decks % 13).to(torch.int8)
        if dealers is None:
            dealers_t = torch.zeros(b, dtype=torch.int64, device=self.device)
        else:
            dealers_t = torch.as_tensor(dealers, device=self.device)
            if dealers_t.shape != (b,) or dealers_t.is_floating_point() or dealers_t.dtype == torch.bool:
                raise ValueError(f"dealers must be an integer tensor of shape ({b},), got {tuple(dealers_t.shape)}")
            dealers_t = dealers_t.long()
            if ((dealers_t < 0) | (dealers_t >= n)).any():
                raise ValueError(f"dealers must be seats 0..{n - 1}")
        if seed is not None:
            self.generator.manual_seed(seed)
        self.first_dealer.copy_(dealers_t)
        everyone = torch.ones(b, dtype=torch.bool, device=self.device)
        self._new_episodes(everyone, deck_kinds)
        self._has_reset = True
        obs, mask = self._observe()
        self._mask = mask
        return obs, mask, {"seat": self.current.clone()}

    def step(
        self, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Apply one action per game. Returns obs, mask, rewards (B, N), done (B,), info.

        ``info["seat"]``: seat to act now; ``info["truncated"]``: the episode that ended was cut by the
        turn limit (then ``done`` is True and rewards are 0). Finished games have already started anew.
        """
        if not self._has_reset:
            raise RuntimeError("step() before reset()")
        if self.check_actions:
            actions = check_actions(actions, self._mask)
        else:
            actions = torch.as_tensor(actions, device=self.device).long()
        rewards, done, truncated = self._apply(actions)
        if bool(done.any()):
            self._new_episodes(done, None)
        obs, mask = self._observe()
        self._mask = mask
        return obs, mask, rewards, done, {"seat": self.current.clone(), "truncated": truncated}

    def legal_mask(self) -> torch.Tensor:
        """(B, 28) bool mask of the legal actions of the seat to act."""
        return self._legal_mask()

    def memory_bytes_per_game(self) -> int:
        """Bytes of per-game state (the observation and mask buffers of a step come on top)."""
        total = sum(getattr(self, name).element_size() * getattr(self, name).nelement() for name in STATE_FIELDS)
        return total // self.batch_size

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: state tensors (copies) and the generator state."""
        state = {name: getattr(self, name).clone() for name in STATE_FIELDS}
        state.update(
            generator=self.generator.get_state(), has_reset=self._has_reset, num_players=self.num_players,
            episode=self.episode, batch_size=self.batch_size, max_turns_per_deal=self.max_turns_per_deal,
        )  # fmt: skip
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for key in ("num_players", "episode", "batch_size", "max_turns_per_deal"):
            if state.get(key) != getattr(self, key):
                raise ValueError(f"state {key}={state.get(key)!r} does not match this env's {getattr(self, key)!r}")
        for name in STATE_FIELDS:
            mine = getattr(self, name)
            theirs = torch.as_tensor(state[name])
            if theirs.shape != mine.shape:
                raise ValueError(f"state field {name} has shape {tuple(theirs.shape)}, expected {tuple(mine.shape)}")
        for name in STATE_FIELDS:
            getattr(self, name).copy_(torch.as_tensor(state[name]))
        self.generator.set_state(state["generator"])
        self._has_reset = bool(state["has_reset"])
        self._mask = self._legal_mask()

    # -------------------------------------------------------- observation
    def _held(self) -> torch.Tensor:
        return self.hands[self._rows, self.current] > 0

    def _legal_mask(self) -> torch.Tensor:
        return self._mask_from(self._held())

    def _mask_from(self, held: torch.Tensor) -> torch.Tensor:
        phase = self.phase[:, None]
        playable = self._playable[self.top] | (phase == PLAY_AFTER_JOKER)
        return torch.cat([held & playable & (phase != DISCARD), held & (phase == DISCARD)], 1)

    def _observe(self) -> tuple[torch.Tensor, torch.Tensor]:
        rows, cur, n = self._rows, self.current, self.num_players
        counts = self.hands[rows, cur]
        mask = self._mask_from(counts > 0)
        big = self.big_deck.long()
        fraction = self._size_fraction[big]  # (B, 109)
        relative = (cur[:, None] + self._seat_offsets) % n
        alive = self.alive.gather(1, relative)
        sizes = fraction.gather(1, self.hand_size.gather(1, relative)) * alive
        totals = self._total_fraction[self.totals.gather(1, relative).clamp(max=100)]
        out = torch.where(self.out_seat >= 0, (self.out_seat - cur) % n, n)
        obs = torch.cat(
            [
                counts.float() * 0.125,
                self._kind_eye[self.top],
                self._phase_eye[self.phase],
                self.pile_counts.float() * 0.125,
                self.own_discards[rows, cur].clamp(max=8).float() * 0.125,
                fraction.gather(1, self.stock_len[:, None]),
                fraction.gather(1, self.discard_len[:, None]),
                self.big_deck[:, None].float(),
                sizes,
                totals,
                alive.float(),
                self._seat_eye[out],
                self._seat_eye[(self.dealer - cur) % n],
            ],
            1,
        )
        return obs, mask

    # -------------------------------------------------------------- rules
    def _next_alive(self, seat: torch.Tensor) -> torch.Tensor:
        n = self.num_players
        if self.episode == "deal":
            return (seat + 1) % n
        candidates = (seat[:, None] + 1 + self._seat_offsets) % n
        first = self.alive.gather(1, candidates).to(torch.int8).argmax(1, keepdim=True)
        return candidates.gather(1, first).squeeze(1)

    def _can_play(self, seat: torch.Tensor) -> torch.Tensor:
        held = self.hands[self._rows, seat] > 0
        return (held & self._playable[self.top]).any(1)

    def _permutations(self, purpose: str, rows: torch.Tensor, lengths: torch.Tensor, width: int) -> torch.Tensor:
        """(S, width) int64: row j starts with a uniform permutation of 0..lengths[j]-1."""
        if self._permutation_hook is not None:
            perm = torch.as_tensor(self._permutation_hook(purpose, rows, lengths), device=self.device).long()
            if perm.shape[1] < width:
                perm = torch.cat([perm, perm.new_zeros(perm.shape[0], width - perm.shape[1])], 1)
            return perm[:, :width]
        keys = torch.rand(rows.shape[0], width, generator=self.generator, device=self.device)
        keys.masked_fill_(torch.arange(width, device=self.device) >= lengths[:, None], 2.0)
        return keys.argsort(1)

    def _rebuild(self, need: torch.Tensor) -> None:
        """Shuffle discard pile + play pile under its top into a new stock, in the games of ``need``."""
        rows = need.nonzero().flatten()
        width = self.stock.shape[1]
        d_len, p_len = self.discard_len[rows], self.pile_len[rows]
        refill_len = d_len + p_len - 1
        position = torch.arange(width, device=self.device)
        # refill[j] = discard[j] for j < d_len, else pile[j - d_len] (the top card stays on the pile).
        from_pile = (position - d_len[:, None]).clamp(0, width - 1)
        refill = torch.where(position < d_len[:, None], self.discard[rows], self.pile[rows].gather(1, from_pile))
        perm = self._permutations("rebuild", rows, refill_len, width)
        self.stock[rows] = refill.gather(1, perm)
        self.stock_len[rows] = refill_len
        self.discard_len[rows] = 0
        top = self.pile[rows].gather(1, (p_len - 1)[:, None])
        self.pile[rows, 0] = top.squeeze(1)
        self.pile_len[rows] = 1
        counts = torch.zeros(rows.shape[0], NUM_KINDS, dtype=torch.int8, device=self.device)
        counts.scatter_(1, top.long(), 1)
        self.pile_counts[rows] = counts

    def _draw(self, drawing: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """Each game of ``drawing`` draws the stock's top card into ``seat``; returns which could draw."""
        need = drawing & (self.stock_len == 0) & (self.discard_len + self.pile_len > 1)
        if bool(need.any()):
            self._rebuild(need)
        drew = drawing & (self.stock_len > 0)
        rows = self._rows
        card = self.stock[rows, (self.stock_len - 1).clamp(min=0)].long()
        self.hands[rows, seat, card] += drew.to(torch.int8)
        self.hand_size[rows, seat] += drew
        self.stock_len -= drew.long()
        return drew

    def _next_turn(self, active: torch.Tensor, seat: torch.Tensor, truncated: torch.Tensor) -> None:
        """Pass the turn on from ``seat`` in the ``active`` games: draws and passes until someone must decide."""
        seat = seat.clone()
        active = active.clone()
        while True:
            self.turns += active
            cut = active & (self.turns > self.max_turns_per_deal)
            truncated |= cut
            active &= ~cut
            seat = torch.where(active, self._next_alive(seat), seat)
            can = active & self._can_play(seat)
            self.current = torch.where(can, seat, self.current)
            self.phase = torch.where(can, PLAY, self.phase)
            active &= ~can
            if not bool(active.any()):
                return
            held = self.hand_size[self._rows, seat]
            drew = self._draw(active, seat)
            decide = drew & (held >= 2)
            self.current = torch.where(decide, seat, self.current)
            self.phase = torch.where(decide, DISCARD, self.phase)
            active &= ~decide
            if not bool(active.any()):
                return

    def _apply(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows, seat = self._rows, self.current
        b = self.batch_size
        discarding = self.phase == DISCARD
        playing = ~discarding
        kind = actions - DISCARD_OFFSET * discarding.long()
        self.hands[rows, seat, kind] -= 1
        self.hand_size[rows, seat] -= 1
        # a discard
        self.discard[rows, self.discard_len] = torch.where(
            discarding, kind.to(torch.int8), self.discard[rows, self.discard_len]
        )
        self.discard_len += discarding.long()
        self.own_discards[rows, seat, kind] += discarding.to(torch.int8)
        # a play
        self.pile[rows, self.pile_len] = torch.where(playing, kind.to(torch.int8), self.pile[rows, self.pile_len])
        self.pile_len += playing.long()
        self.pile_counts[rows, kind] += playing.to(torch.int8)
        self.top = torch.where(playing, kind, self.top)
        free_card = playing & (kind == JOKER_KIND) & (self.hand_size[rows, seat] > 0)
        self.phase = torch.where(free_card, PLAY_AFTER_JOKER, PLAY)

        ended = torch.zeros(b, dtype=torch.bool, device=self.device)
        went_out = torch.full((b,), NOBODY, dtype=torch.int64, device=self.device)
        truncated = torch.zeros(b, dtype=torch.bool, device=self.device)
        complete = playing & ~free_card  # a play (with its Joker free cards) is complete
        # An answer to a player who went out: they draw 2 and are back in (if nothing to draw, they won).
        answered = complete & (self.out_seat >= 0)
        if bool(answered.any()):
            out = self.out_seat.clamp(min=0)
            first = self._draw(answered, out)
            second = self._draw(answered, out)
            stands = answered & ~(first | second)
            ended |= stands
            went_out = torch.where(stands, out, went_out)
            self.out_seat = torch.where(answered, NOBODY, self.out_seat)
            complete &= ~stands
        # Going out: the next player must answer if able, else the deal ends.
        gone = complete & (self.hand_size[rows, seat] == 0)
        if bool(gone.any()):
            self.turns += gone
            answerer = self._next_alive(seat)
            answers = gone & self._can_play(answerer)
            self.out_seat = torch.where(answers, seat, self.out_seat)
            self.current = torch.where(answers, answerer, self.current)
            unanswered = gone & ~answers
            ended |= unanswered
            went_out = torch.where(unanswered, seat, went_out)
        self._next_turn(discarding | (complete & ~gone), seat, truncated)
        return self._end_deals(ended, went_out, truncated)

    def _end_deals(
        self, ended: torch.Tensor, went_out: torch.Tensor, truncated: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Score the deals that ended; returns rewards, done (episode over) and truncated."""
        n = self.num_players
        rewards = torch.zeros(self.batch_size, n, dtype=torch.float32, device=self.device)
        if not bool(ended.any()):
            return rewards, truncated.clone(), truncated
        points = (self.hands.long() * self._points).sum(2)
        scores = self.alive & (self._seat_offsets != went_out[:, None]) & ended[:, None]
        points = torch.where(scores, points, 0)
        if self.episode == "deal":
            rewards = torch.where(ended[:, None], (-points.double() / 100.0).float(), rewards)
            return rewards, ended | truncated, truncated
        # match: totals, eliminations (-1/(N-1) each), the last player left wins (+1)
        self.totals += points
        eliminated = ended[:, None] & self.alive & (self.totals >= ELIMINATION_TOTAL)
        self.alive &= ~eliminated
        left = self.alive.sum(1)
        match_over = ended & (left == 1)
        loss = -1.0 / (n - 1)
        rewards = torch.where(eliminated, loss, rewards)
        rewards = torch.where(match_over[:, None] & self.alive, 1.0, rewards)
        next_deal = ended & ~match_over
        if bool(next_deal.any()):
            self.dealer = torch.where(next_deal, self._next_alive(self.dealer), self.dealer)
            self._deal(next_deal, None, "deal")
        return rewards, match_over | truncated, truncated

    # ----------------------------------------------------------- dealing
    def _new_episodes(self, rows_mask: torch.Tensor, deck_kinds: torch.Tensor | None) -> None:
        self.alive[rows_mask] = True
        self.totals[rows_mask] = 0
        self.dealer = torch.where(rows_mask, self.first_dealer, self.dealer)
        self._deal(rows_mask, deck_kinds, "episode")

    def _deal(self, rows_mask: torch.Tensor, deck_kinds: torch.Tensor | None, purpose: str) -> None:
        """A new deal in the games of ``rows_mask`` (dealer, alive set), then the first turn."""
        dev, n = self.device, self.num_players
        rows = rows_mask.nonzero().flatten()
        s = rows.shape[0]
        width = self.stock.shape[1]
        players_in = self.alive[rows].sum(1)
        big = players_in >= 5
        size = torch.where(big, 108, 54)
        if deck_kinds is None:
            perm = self._permutations(purpose, rows, size, self.max_deck)
            kinds108 = self._deck_kinds[108]
            kinds54 = torch.cat([self._deck_kinds[54], self._deck_kinds[54].new_zeros(54)])
            if self.max_deck == 108:
                deck_kinds = torch.where(big[:, None], kinds108[perm], kinds54[perm])
            else:
                deck_kinds = self._deck_kinds[54][perm]
        deck = deck_kinds.long()
        dealer = self.dealer[rows]
        # Packets of 5 to the players in, from the dealer's left; the dealer last.
        relative = (dealer[:, None] + 1 + self._seat_offsets) % n  # seat of the j-th player after the dealer
        alive_rel = self.alive[rows].gather(1, relative)
        packet = (alive_rel.long().cumsum(1) - 1).clamp(min=0)  # packet index of each of those seats
        cards = deck[:, : HAND_SIZE * n].reshape(s, n, HAND_SIZE)
        packet_counts = torch.zeros(s, n, NUM_KINDS, dtype=torch.int8, device=dev)
        packet_counts.scatter_add_(2, cards, torch.ones_like(cards, dtype=torch.int8))
        hands_rel = packet_counts.gather(1, packet[:, :, None].expand(s, n, NUM_KINDS)) * alive_rel[:, :, None]
        hands = torch.zeros_like(hands_rel).scatter_(1, relative[:, :, None].expand(s, n, NUM_KINDS), hands_rel)
        self.hands[rows] = hands
        self.hand_size[rows] = hands.long().sum(2)
        self.own_discards[rows] = 0
        dealt = HAND_SIZE * players_in
        start = deck.gather(1, dealt[:, None])
        stock_len = size - dealt - 1
        position = torch.arange(width, device=dev)
        stock_index = (size[:, None] - 1 - position).clamp(min=0)  # stock top (deck index dealt+1) last
        self.stock[rows] = deck.gather(1, stock_index.clamp(max=deck.shape[1] - 1)).to(torch.int8)
        self.stock_len[rows] = stock_len
        self.discard_len[rows] = 0
        pile = torch.zeros(s, width, dtype=torch.int8, device=dev)
        pile[:, 0] = start.squeeze(1).to(torch.int8)
        self.pile[rows] = pile
        self.pile_len[rows] = 1
        counts = torch.zeros(s, NUM_KINDS, dtype=torch.int8, device=dev)
        counts.scatter_(1, start, 1)
        self.pile_counts[rows] = counts
        self.top[rows] = start.squeeze(1)
        self.phase[rows] = PLAY
        self.out_seat[rows] = NOBODY
        self.turns[rows] = 0
        self.big_deck[rows] = big
        truncated = torch.zeros_like(rows_mask)
        self._next_turn(rows_mask, self.dealer, truncated)
