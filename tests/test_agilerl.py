"""AgileRL's multi-agent IPPO acting through whole episodes (docs/integrations.md, the AgileRL recipe).

AgileRL pins PettingZoo < 1.27 and needs peft at import, so it runs in a venv of its own (``.ci/run``, the AgileRL
stage: ``pip install -e '.[agilerl]' pytest``); elsewhere this file is skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("agilerl")
from agilerl.algorithms import IPPO  # noqa: E402
from pettingzoo.utils.conversions import turn_based_aec_to_parallel  # noqa: E402
from pettingzoo.utils.wrappers import BaseParallelWrapper  # noqa: E402

from cardenvs import rang_v0, ring_rang_v0  # noqa: E402


class MaskInInfo(BaseParallelWrapper):
    """The recipe's wrapper: AgileRL reads each agent's action mask from ``info[agent]["action_mask"]`` (and
    refuses one in the observation), so the observation becomes the vector and the mask moves to the info."""

    def observation_space(self, agent):
        return self.env.observation_space(agent)["observation"]

    def reset(self, seed=None, options=None):
        return self._split(*self.env.reset(seed=seed, options=options))

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        obs, infos = self._split(obs, infos)
        return obs, rewards, terminations, truncations, infos

    @staticmethod
    def _split(obs, infos):
        infos = {agent: {**infos.get(agent, {}), "action_mask": o["action_mask"].tolist()} for agent, o in obs.items()}
        return {agent: o["observation"] for agent, o in obs.items()}, infos


@pytest.mark.parametrize("make", [lambda: rang_v0.env(num_players=4, eliminated="stay"),
                                  lambda: ring_rang_v0.env(episode="round")], ids=["rang-match", "ring_rang-round"])
def test_agilerl_ippo_acts_legally_through_a_whole_episode(make):
    aec = make()
    env = MaskInInfo(turn_based_aec_to_parallel(aec))
    agents = env.possible_agents
    ippo = IPPO([env.observation_space(a) for a in agents], [env.action_space(a) for a in agents], agent_ids=agents)
    obs, infos = env.reset(seed=0)
    returns = dict.fromkeys(agents, 0.0)
    while env.agents:
        action, _, _, _ = ippo.get_action(obs, infos=infos)
        actions = {agent: int(np.asarray(action[agent]).reshape(-1)[0]) for agent in env.agents}
        acting = [agent for agent in env.agents if any(infos[agent]["action_mask"])]
        assert len(acting) == 1 and infos[acting[0]]["action_mask"][actions[acting[0]]] == 1
        obs, rewards, _, _, infos = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    game = aec.unwrapped.game
    assert game.is_over()
    totals = [returns[a] for a in agents]
    if aec.metadata["name"] == "ring_rang_v0":  # the teams' round points
        assert totals[0] == totals[2] == -totals[1] == -totals[3] and abs(totals[0]) in (1, 2, 3)
    else:  # Rang: the winner +1, the others -1/3
        assert totals == pytest.approx([1.0 if alive else -1 / 3 for alive in game.alive])
