"""Gymnasium single-agent envs: one learner against fixed or drawn opponents.

``import cardenvs`` registers them by entry-point string (this module is imported by ``gymnasium.make``)::

    import gymnasium, cardenvs
    env = gymnasium.make("cardenvs/RingRang-v0", opponents="rules_strong")
    env = gymnasium.make("cardenvs/Rang-v0", num_players=4, opponents=["random", "rules_basic", "rules_strong"])

They are :class:`cardenvs.train.wrappers.SelfPlayEnv` (the self-play training wrapper:
the learner is one Rang seat or both seats of a RING RANG team, its seat drawn every
episode; reward = what its seat earned since its previous decision) with an
``opponents`` argument that says who plays the other seats:

* a registry spec (``"random"``, ``"rules_strong"``, ``"pimc:worlds=8"``...) or an
  :class:`~cardenvs.agents.base.Agent` instance: every other seat;
* a list with one entry (spec or Agent) per opposing seat, in playing order from the
  learner's left (RING RANG also takes one entry for the whole opposing team);
* a ``{spec: weight}`` dict or an :class:`~cardenvs.train.wrappers.OpponentPool`:
  drawn per episode, once for the opposing team (RING RANG) or once per other seat (Rang).

The observation is the AEC env's vector; the legal-action mask is in
``info["action_mask"]`` and from ``action_masks()`` (for sb3-contrib's MaskablePPO,
through gymnasium's wrappers with ``get_wrapper_attr``). An illegal action raises
ValueError; ``illegal_action="terminate"`` ends the episode with ``illegal_reward``
instead (for algorithms that ignore the mask). A malformed action (not an int of the
action space: a float, a string, ``None``, negative, too large) is a ValueError in both
modes, with nothing changed. Every other keyword (``episode``,
``knocking``, ``max_turns_per_deal``...) goes to the AEC env.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.agents.registry import check_spec
from cardenvs.games import game_spec
from cardenvs.train.wrappers import OpponentPool, SelfPlayEnv

Opponent = str | Agent
OpponentsArg = Opponent | Sequence[Opponent] | Mapping[str, float] | OpponentPool


class CardGymEnv(SelfPlayEnv):
    """:class:`SelfPlayEnv` with opponents given per seat as well as drawn from a pool."""

    def __init__(
        self,
        game: str,
        opponents: OpponentsArg = "random",
        *,
        num_players: int | None = None,
        episode: str | None = None,
        learner_seat: int | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        **env_kwargs: Any,
    ):
        if illegal_action not in ("raise", "terminate"):
            raise ValueError(f"illegal_action: expected 'raise' or 'terminate', got {illegal_action!r}")
        players = game_spec(game).players_or_fixed(num_players)
        pool, self.fixed_opponents = _parse_opponents(opponents, game, players)
        super().__init__(
            game, pool, episode=episode, num_players=num_players, learner_seat=learner_seat, env_kwargs=env_kwargs
        )
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super(SelfPlayEnv, self).reset(seed=seed)  # gymnasium's own seeding (self.np_random), as env checkers expect
        return super().reset(seed=seed, options=options)

    def step(self, action: int):
        # a malformed action (not an int of the action space) is a ValueError in both modes
        if self.illegal_action == "terminate" and not self._mask[self._action_index(action)]:
            self._mask = np.zeros_like(self._mask)
            return self._last_obs.copy(), self.illegal_reward, True, False, {**self._info(), "illegal_action": True}
        return super().step(action)

    def _draw_opponents(self) -> dict[int, Agent]:
        if self.fixed_opponents is None:
            return super()._draw_opponents()
        learner = self._seats_of_learner[0]
        others = [(learner + k) % self.num_players for k in range(1, self.num_players)]
        others = [s for s in others if s not in self._seats_of_learner]
        entries = self.fixed_opponents * len(others) if len(self.fixed_opponents) == 1 else self.fixed_opponents
        opponents: dict[int, Agent] = {}
        for seat, entry in zip(others, entries, strict=True):
            agent = entry if isinstance(entry, Agent) else self._agent_for(entry, seat)
            agent.reset(seed=int(self.rng.integers(2**63)))
            opponents[seat] = agent
        return opponents


def _parse_opponents(
    opponents: OpponentsArg, game: str, num_players: int
) -> tuple[OpponentPool, list[Opponent] | None]:
    """The pool (drawn opponents) and the per-seat list (fixed opponents, or None) that ``opponents`` names."""
    spec = game_spec(game)
    seats = num_players - len(spec.seats_of_side(0, num_players))  # the seats of the other side(s)
    if isinstance(opponents, OpponentPool):
        if opponents.game != game:
            raise ValueError(f"opponents: the pool is for {opponents.game!r}, not {game!r}")
        return opponents, None
    if isinstance(opponents, Mapping):
        return OpponentPool(game, spec_weights=dict(opponents)), None
    if isinstance(opponents, (str, Agent)):
        entries: list[Opponent] = [opponents]
    elif isinstance(opponents, Sequence):
        entries = list(opponents)
        allowed = (1, seats) if spec.partnerships else (seats,)
        if len(entries) not in allowed:
            what = f"1 (the opposing team) or {seats} (one per opposing seat)" if spec.partnerships else str(seats)
            raise ValueError(
                f"opponents: expected {what} entries for {game} with {num_players} players, got {len(entries)};"
                " give a {spec: weight} dict to draw opponents per episode"
            )
    else:
        raise ValueError(
            "opponents: expected a spec, an Agent, a list of them, a {spec: weight} dict or an OpponentPool,"
            f" got {type(opponents).__name__}"
        )
    for entry in entries:
        if isinstance(entry, str):
            check_spec(entry, game)
        elif not isinstance(entry, Agent):
            raise ValueError(f"opponents: expected agent specs or Agent instances, got {entry!r}")
    # the pool is unused while opponents are fixed, but SelfPlayEnv wants one
    return OpponentPool(game), entries


def make_env(game: str, opponents: OpponentsArg = "random", num_players: int | None = None,
             **kwargs: Any) -> CardGymEnv:
    """``gymnasium.make(<the game's gym_id>, ...)``: the learner plays one side of ``game`` (its ``gym_id`` is
    registered with ``kwargs={"game": name}``); ``num_players`` where the game's seats vary (default 4)."""
    spec = game_spec(game)
    if spec.fixed_players and num_players not in (None, spec.players[0]):
        raise ValueError(f"num_players: {spec.title} has {spec.players[0]} players, got {num_players!r}")
    return CardGymEnv(spec.name, opponents, num_players=spec.players_or_fixed(num_players), **kwargs)


def env_ids() -> dict[str, str]:
    """gymnasium id -> game name, of every game of the table (the ids this module serves)."""
    from cardenvs.games import GAMES

    return {spec.gym_id: spec.name for spec in GAMES.values()}
