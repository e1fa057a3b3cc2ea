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

from cardenvs.rang.engine import (
    DECK_54,
    DECK_108,
    DEFAULT_MAX_TURNS_PER_DEAL,
    DISCARD,
    DISCARD_OFFSET,
    ELIMINATION_TOTAL,
    HAND_SIZE,
    JOKER_KIND,
    KIND_POINTS,
    NUM_ACTIONS,
    NUM_KINDS,
    PLAY,
    PLAY_AFTER_JOKER,
    PLAYABLE_ON,
    POINTS_SCALE,
    TWO_DECKS_FROM,
    WIN_REWARD,
    deck_size_for,
    elimination_reward,
    kind_of,
)
from cardenvs.rang.observation import FIXED_SIZE
from cardenvs.vector.common import check_actions, make_generator

__all__ = ["RangVectorEnv"]

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
            [t * 0.01 if t < ELIMINATION_TOTAL else 1.0 for t in range(ELIMINATION_TOTAL + 1)],
            dtype=torch.float64, device=dev,
        ).float()
        self._kind_eye8 = torch.eye(NUM_KINDS, dtype=torch.int8, device=dev) * 8  # one-hots, in eighths
        self._phase_eye8 = torch.eye(3, dtype=torch.int8, device=dev) * 8
        # Legal actions by (phase, top): plays of the playable kinds / any kind / discards, AND the kinds held.
        self._allowed = torch.zeros(3 * NUM_KINDS, NUM_ACTIONS, dtype=torch.bool, device=dev)
        self._allowed[PLAY * NUM_KINDS : (PLAY + 1) * NUM_KINDS, :NUM_KINDS] = self._playable
        self._allowed[PLAY_AFTER_JOKER * NUM_KINDS : (PLAY_AFTER_JOKER + 1) * NUM_KINDS, :NUM_KINDS] = True
        self._allowed[DISCARD * NUM_KINDS :, NUM_KINDS:] = True
        self._seat_eye = torch.cat([torch.eye(n, device=dev), torch.zeros(1, n, device=dev)])  # row n: nobody
        self._rows = torch.arange(batch_size, device=dev)
        self._seat_offsets = torch.arange(n, device=dev)
        self._minus_ones = torch.full((batch_size,), -1, dtype=torch.int8, device=dev)
        self._minus_ones_long = self._minus_ones.long()

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
        self._new_episodes(self._rows, deck_kinds)
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
            self._new_episodes(done.nonzero().flatten(), None)
        obs, mask = self._observe()
        self._mask = mask
        return obs, mask, rewards, done, {"seat": self.current.clone(), "truncated": truncated}

    def legal_mask(self) -> torch.Tensor:
        """(B, 28) bool mask of the legal actions of the seat to act."""
        return self._legal_mask()

    @property
    def hidden_size(self) -> int:
        """Width of :meth:`hidden_cards`."""
        return (self.num_players - 1) * NUM_KINDS

    def hidden_cards(self, seat: torch.Tensor) -> torch.Tensor:
        """(B, (N - 1) * 14) float: the other seats' hands (cards per kind, in eighths), seat+1, seat+2, ...

        What ``seat`` cannot see (a trainer's critic may use it: training only, never an agent's observation).
        """
        others = (seat.unsqueeze(1) + self._seat_offsets[1:]) % self.num_players  # (B, N - 1)
        hands = self.hands.gather(1, others.unsqueeze(2).expand(-1, -1, NUM_KINDS))
        return hands.flatten(1).float() / 8.0

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
            if name not in state:
                raise ValueError(f"state field {name} is missing")
            theirs = torch.as_tensor(state[name])
            if theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                raise ValueError(f"state field {name} is {theirs.dtype} of shape {tuple(theirs.shape)}, expected "
                                 f"{mine.dtype} of shape {tuple(mine.shape)}")
        if state.get("has_reset", True):  # before reset() the arrays hold no game yet
            self._check_values({name: torch.as_tensor(state[name]).to(self.device) for name in STATE_FIELDS})
        for name in STATE_FIELDS:
            getattr(self, name).copy_(torch.as_tensor(state[name]))
        self.generator.set_state(state["generator"])
        self._has_reset = bool(state["has_reset"])
        self._mask = self._legal_mask()

    def _check_values(self, state: dict[str, torch.Tensor]) -> None:
        """Every game of a state to load is one the rules can reach: seats, phase and counters in range, each
        hand's size its cards, the pile's counts and top its cards, and every card of the deck in one place (a
        value out of range crashed the next step; one in range but wrong ran on silently)."""
        b, n, width = self.batch_size, self.num_players, self.stock.shape[1]

        def require(name: str, ok: torch.Tensor) -> None:
            ok = ok.reshape(b, -1).all(1)
            if not bool(ok.all()):
                game = int((~ok).nonzero()[0])
                raise ValueError(f"state field {name}: game {game} holds a value the rules cannot reach")

        alive = state["alive"]
        require("alive", alive.sum(1) >= 1)
        for name, low, high in (("current", 0, n - 1), ("dealer", 0, n - 1), ("first_dealer", 0, n - 1),
                                ("out_seat", NOBODY, n - 1), ("turns", 0, self.max_turns_per_deal),
                                ("stock_len", 0, width), ("discard_len", 0, width), ("pile_len", 1, width),
                                ("top", 0, NUM_KINDS - 1), ("totals", 0, 2**40), ("hands", 0, 8),
                                ("own_discards", 0, 127), ("pile_counts", 0, 8)):  # fmt: skip
            require(name, (state[name] >= low) & (state[name] <= high))
        require("phase", (state["phase"] == PLAY) | (state["phase"] == PLAY_AFTER_JOKER) | (state["phase"] == DISCARD))
        require("current", alive.gather(1, state["current"].unsqueeze(1)))
        require("alive", ~alive | (state["totals"] < ELIMINATION_TOTAL))
        require("big_deck", ~state["big_deck"] | torch.tensor(self.max_deck == 108, device=self.device))
        hands = state["hands"].long()
        require("hand_size", (state["hand_size"] == hands.sum(2)) & (alive | (state["hand_size"] == 0)))
        counts = hands.sum(1)
        position = torch.arange(width, device=self.device)
        for name in ("stock", "discard", "pile"):
            used = position < state[f"{name}_len"].unsqueeze(1)
            kinds = state[name].long()
            require(name, ~used | ((kinds >= 0) & (kinds < NUM_KINDS)))
            held = torch.zeros(b, NUM_KINDS, dtype=torch.int64, device=self.device)
            held.scatter_add_(1, kinds.clamp(0, NUM_KINDS - 1), used.long())
            counts += held
            if name == "pile":
                require("pile_counts", held == state["pile_counts"].long())
                require("top", kinds.gather(1, (state["pile_len"] - 1).unsqueeze(1)).squeeze(1) == state["top"])
        deck = torch.stack([torch.bincount(self._deck_kinds[size].long(), minlength=NUM_KINDS) for size in (54, 108)])
        require("hands", counts == deck[state["big_deck"].long()])  # every card of the deck in one place

    # -------------------------------------------------------- observation
    def _seat_rows(self, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """Row indices into the (B * N, ...) views of per-seat tensors."""
        return rows * self.num_players + seat

    def _held(self) -> torch.Tensor:
        hands = self.hands.view(-1, NUM_KINDS)
        return hands.index_select(0, self._seat_rows(self._rows, self.current)) > 0

    def _legal_mask(self) -> torch.Tensor:
        return self._mask_from(self._held())

    def _mask_from(self, held: torch.Tensor) -> torch.Tensor:
        allowed = self._allowed.index_select(0, self.phase * NUM_KINDS + self.top)
        return held.repeat(1, 2) & allowed

    def _observe(self) -> tuple[torch.Tensor, torch.Tensor]:
        cur, n = self.current, self.num_players
        seat_rows = self._seat_rows(self._rows, cur)
        counts = self.hands.view(-1, NUM_KINDS).index_select(0, seat_rows)
        mask = self._mask_from(counts > 0)
        # Parts counted in eighths (one-hots as 8): hand, top, phase, play pile, own discards.
        eighths = torch.cat(
            [
                counts,
                self._kind_eye8.index_select(0, self.top),
                self._phase_eye8.index_select(0, self.phase),
                self.pile_counts,
                self.own_discards.view(-1, NUM_KINDS).index_select(0, seat_rows).clamp(max=8),
            ],
            1,
        )
        relative = (cur[:, None] + self._seat_offsets) % n
        # Sizes as fractions of the deck: stock, discard pile, hands by relative seat (0 for players out).
        sizes = torch.cat([self.stock_len[:, None], self.discard_len[:, None], self.hand_size.gather(1, relative)], 1)
        table_row = self.big_deck.long() * self._size_fraction.shape[1]
        sizes = self._size_fraction.view(-1).take(sizes + table_row[:, None])
        out = torch.where(self.out_seat >= 0, (self.out_seat - cur) % n, n)
        obs = torch.cat(
            [
                eighths.float().mul_(0.125),
                sizes[:, :2],
                self.big_deck[:, None].float(),
                sizes[:, 2:],
                self._total_fraction.take(self.totals.gather(1, relative).clamp(max=ELIMINATION_TOTAL)),
                self.alive.gather(1, relative).float(),
                self._seat_eye.index_select(0, out),
                self._seat_eye.index_select(0, (self.dealer - cur) % n),
            ],
            1,
        )
        return obs, mask

    # -------------------------------------------------------------- rules
    # The helpers below work on a subset of games: ``rows`` (S,) int64 batch indices, ``seat`` (S,) seats.
    def _next_alive(self, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        n = self.num_players
        if self.episode == "deal":
            return (seat + 1) % n
        candidates = (seat[:, None] + 1 + self._seat_offsets) % n
        first = self.alive.index_select(0, rows).gather(1, candidates).to(torch.int8).argmax(1, keepdim=True)
        return candidates.gather(1, first).squeeze(1)

    def _can_play(self, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        held = self.hands.view(-1, NUM_KINDS).index_select(0, self._seat_rows(rows, seat)) > 0
        return (held & self._playable.index_select(0, self.top.index_select(0, rows))).any(1)

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

    def _rebuild(self, rows: torch.Tensor) -> None:
        """Shuffle discard pile + play pile under its top into a new stock (the games have cards for it)."""
        width = self.stock.shape[1]
        d_len, p_len = self.discard_len[rows], self.pile_len[rows]
        refill_len = d_len + p_len - 1
        position = torch.arange(width, device=self.device)
        # refill[j] = discard[j] for j < d_len, else pile[j - d_len] (the top card stays on the pile).
        pile = self.pile[rows]
        from_pile = (position - d_len[:, None]).clamp(0, width - 1)
        refill = torch.where(position < d_len[:, None], self.discard[rows], pile.gather(1, from_pile))
        perm = self._permutations("rebuild", rows, refill_len, width)
        self.stock[rows] = refill.gather(1, perm)
        self.stock_len[rows] = refill_len
        self.discard_len[rows] = 0
        top = pile.gather(1, (p_len - 1)[:, None])
        self.pile[rows, 0] = top.squeeze(1)
        self.pile_len[rows] = 1
        counts = torch.zeros(rows.shape[0], NUM_KINDS, dtype=torch.int8, device=self.device)
        self.pile_counts[rows] = counts.scatter_(1, top.long(), 1)

    def _draw(self, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """Each game draws the stock's top card into ``seat`` (rebuilding if needed); returns which could."""
        stock_len = self.stock_len.index_select(0, rows)
        need = stock_len == 0
        if bool(need.any()):
            need &= self.discard_len.index_select(0, rows) + self.pile_len.index_select(0, rows) > 1
            if bool(need.any()):
                self._rebuild(rows[need])
                stock_len = self.stock_len.index_select(0, rows)
        drew = stock_len > 0
        width = self.stock.shape[1]
        card = self.stock.view(-1).index_select(0, rows * width + (stock_len - 1).clamp(min=0)).long()
        seat_rows = self._seat_rows(rows, seat)
        self.hands.view(-1).index_add_(0, seat_rows * NUM_KINDS + card, drew.to(torch.int8))
        self.hand_size.view(-1).index_add_(0, seat_rows, drew.long())
        self.stock_len.index_add_(0, rows, -drew.long())
        return drew

    def _decide(self, rows: torch.Tensor, seat: torch.Tensor, phase: int) -> None:
        self.current.index_copy_(0, rows, seat)
        self.phase.index_fill_(0, rows, phase)

    def _next_turn(self, rows: torch.Tensor, seat: torch.Tensor, truncated: torch.Tensor) -> None:
        """Pass the turn on from ``seat``: automatic draws and passes until someone must decide."""
        while rows.numel():
            self.turns.index_add_(0, rows, torch.ones_like(rows))
            within = self.turns.index_select(0, rows) <= self.max_turns_per_deal
            if not bool(within.all()):
                truncated.index_fill_(0, rows[~within], True)
                rows, seat = rows[within], seat[within]
            seat = self._next_alive(rows, seat)
            can = self._can_play(rows, seat)
            self._decide(rows[can], seat[can], PLAY)
            rows, seat = rows[~can], seat[~can]
            if not rows.numel():
                return
            held = self.hand_size.view(-1).index_select(0, self._seat_rows(rows, seat))
            drew = self._draw(rows, seat)
            decide = drew & (held >= 2)
            self._decide(rows[decide], seat[decide], DISCARD)
            rows, seat = rows[~decide], seat[~decide]

    def _apply(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows, seat, b = self._rows, self.current, self.batch_size
        seat_rows = self._seat_rows(rows, seat)
        discarding = self.phase == DISCARD
        playing = ~discarding
        kind = actions - DISCARD_OFFSET * discarding.long()
        cell = seat_rows * NUM_KINDS + kind
        self.hands.view(-1).index_add_(0, cell, self._minus_ones)
        self.hand_size.view(-1).index_add_(0, seat_rows, self._minus_ones_long)
        kind8 = kind.to(torch.int8)
        width = self.stock.shape[1]
        # Written into the next free slot of both piles; only the pile that gets the card grows.
        self.discard.view(-1).index_copy_(0, rows * width + self.discard_len, kind8)
        self.discard_len += discarding
        self.own_discards.view(-1).index_add_(0, cell, discarding.to(torch.int8))
        self.pile.view(-1).index_copy_(0, rows * width + self.pile_len, kind8)
        self.pile_len += playing
        self.pile_counts.view(-1).index_add_(0, rows * NUM_KINDS + kind, playing.to(torch.int8))
        self.top = torch.where(playing, kind, self.top)
        remaining = self.hand_size.view(-1).index_select(0, seat_rows)
        free_card = playing & (kind == JOKER_KIND) & (remaining > 0)
        self.phase = free_card.long()  # PLAY_AFTER_JOKER (1) or PLAY (0)

        ended = torch.zeros(b, dtype=torch.bool, device=self.device)
        went_out = torch.full((b,), NOBODY, dtype=torch.int64, device=self.device)
        truncated = torch.zeros(b, dtype=torch.bool, device=self.device)
        complete = playing & ~free_card  # a play (with its Joker free cards) is complete
        # An answer to a player who went out: they draw 2 and are back in (if nothing to draw, they won).
        answered = complete & (self.out_seat >= 0)
        if bool(answered.any()):
            answer_rows = answered.nonzero().flatten()
            out = self.out_seat[answer_rows]
            drew = self._draw(answer_rows, out) | self._draw(answer_rows, out)
            stands = answer_rows[~drew]
            ended[stands] = True
            went_out[stands] = out[~drew]
            complete[stands] = False
            self.out_seat[answer_rows] = NOBODY
        # Going out: the next player must answer if able, else the deal ends.
        gone = complete & (remaining == 0)
        if bool(gone.any()):
            gone_rows = gone.nonzero().flatten()
            gone_seat = seat[gone_rows]
            self.turns[gone_rows] += 1
            answerer = self._next_alive(gone_rows, gone_seat)
            can = self._can_play(gone_rows, answerer)
            self.out_seat[gone_rows[can]] = gone_seat[can]
            self._decide(gone_rows[can], answerer[can], PLAY)
            ended[gone_rows[~can]] = True
            went_out[gone_rows[~can]] = gone_seat[~can]
        passing = (discarding | (complete & ~gone)).nonzero().flatten()
        self._next_turn(passing, seat[passing], truncated)
        return self._end_deals(ended, went_out, truncated)

    def _end_deals(
        self, ended: torch.Tensor, went_out: torch.Tensor, truncated: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Score the deals that ended; returns rewards, done (episode over) and truncated."""
        n = self.num_players
        rewards = torch.zeros(self.batch_size, n, dtype=torch.float32, device=self.device)
        if not bool(ended.any()):
            return rewards, truncated.clone(), truncated
        rows = ended.nonzero().flatten()
        alive = self.alive[rows]
        points = (self.hands[rows].long() * self._points).sum(2)
        points = torch.where(alive & (self._seat_offsets != went_out[rows][:, None]), points, 0)
        if self.episode == "deal":
            rewards[rows] = (-points.double() / POINTS_SCALE).float()
            return rewards, ended | truncated, truncated
        # match: totals, eliminations (-1/(N-1) each), the last player left wins (+1)
        totals = self.totals[rows] + points
        self.totals[rows] = totals
        eliminated = alive & (totals >= ELIMINATION_TOTAL)
        alive &= ~eliminated
        self.alive[rows] = alive
        over = alive.sum(1) == 1
        deal_rewards = torch.where(eliminated, elimination_reward(n), 0.0)
        rewards[rows] = torch.where(over[:, None] & alive, WIN_REWARD, deal_rewards).float()
        done = truncated.clone()
        done[rows[over]] = True
        next_rows = rows[~over]
        if next_rows.numel():
            self.dealer[next_rows] = self._next_alive(next_rows, self.dealer[next_rows])
            self._deal(next_rows, None, "deal")
        return rewards, done, truncated

    # ----------------------------------------------------------- dealing
    def _new_episodes(self, rows: torch.Tensor, deck_kinds: torch.Tensor | None) -> None:
        self.alive[rows] = True
        self.totals[rows] = 0
        self.dealer[rows] = self.first_dealer[rows]
        self._deal(rows, deck_kinds, "episode")

    def _deal(self, rows: torch.Tensor, deck_kinds: torch.Tensor | None, purpose: str) -> None:
        """A new deal in the games ``rows`` (dealer and players in already set), then the first turn."""
        dev, n = self.device, self.num_players
        s = rows.shape[0]
        width = self.stock.shape[1]
        players_in = self.alive[rows].sum(1)
        big = players_in >= TWO_DECKS_FROM
        size = torch.where(big, 108, 54)
        if deck_kinds is None:
            perm = self._permutations(purpose, rows, size, self.max_deck)
            if self.max_deck == 108:
                kinds54 = torch.cat([self._deck_kinds[54], self._deck_kinds[54].new_zeros(54)])
                deck_kinds = torch.where(big[:, None], self._deck_kinds[108][perm], kinds54[perm])
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
        position = torch.arange(width, device=dev)
        stock_index = (size[:, None] - 1 - position).clamp(0, deck.shape[1] - 1)  # stock top (dealt + 1) last
        self.stock[rows] = deck.gather(1, stock_index).to(torch.int8)
        self.stock_len[rows] = size - dealt - 1
        self.discard_len[rows] = 0
        pile = torch.zeros(s, width, dtype=torch.int8, device=dev)
        pile[:, 0] = start.squeeze(1).to(torch.int8)
        self.pile[rows] = pile
        self.pile_len[rows] = 1
        counts = torch.zeros(s, NUM_KINDS, dtype=torch.int8, device=dev)
        self.pile_counts[rows] = counts.scatter_(1, start, 1)
        self.top[rows] = start.squeeze(1)
        self.phase[rows] = PLAY
        self.out_seat[rows] = NOBODY
        self.turns[rows] = 0
        self.big_deck[rows] = big
        self._next_turn(rows, dealer, torch.zeros(self.batch_size, dtype=torch.bool, device=dev))
