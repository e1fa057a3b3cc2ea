"""rules_basic and rules_strong keep their play (issue 16): every published number stays comparable.

The digests below are of the actions both agents chose in seeded whole deals, computed when these
tests were written and equal to those of commit b74dfb3 (release 0.1, before the gauntlet work). A
refactor must leave them unchanged; a stronger rule agent gets a new name instead.
"""

from __future__ import annotations

import hashlib

import pytest

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.agents.registry import make_agent

FROZEN = {
    ("ring_rang", "rules_basic"): "3fdc902533b6cdff",
    ("ring_rang", "rules_strong"): "b642cfdc4e8b8538",
    ("rang", "rules_basic"): "8c14f78f7b8c8065",
    ("rang", "rules_strong"): "8e5a2b855e704ff2",
}


def play_digest(game: str, spec: str, deals: int = 12) -> str:
    digest = hashlib.sha256()
    for deal in range(deals):
        if game == "ring_rang":
            env, extra = ring_rang_v0.env(episode="round"), {}
        else:
            env, extra = rang_v0.env(num_players=4, episode="deal"), {"num_players": 4}
        env.reset(seed=deal)
        agents = [make_agent(spec, game, seed=100 * deal + seat, **extra) for seat in range(4)]
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else agents[int(name.rsplit("_", 1)[1])].act(obs)
            digest.update(b"-" if action is None else action.to_bytes(1, "little"))
            env.step(action)
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("game,spec", list(FROZEN))
def test_rule_agents_play_as_they_always_have(game, spec):
    assert play_digest(game, spec) == FROZEN[(game, spec)]
