"""scripts/fuzz.py loaded by path (one fuzzer for the suite and the long runs), and episode loops the tests share."""

import importlib.util
import sys
from pathlib import Path


def _load_fuzz_module():
    """scripts/fuzz.py is a script, not a package module: load it by path (one fuzzer for suite and long runs)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "fuzz.py"
    spec = importlib.util.spec_from_file_location("cardenvs_fuzz", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzz_module()


def random_play_totals(env, seed: int) -> dict[str, float]:
    """Random legal play of a reset env to its end (the fuzzer's recorder); each agent's total reward."""
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent, _action, reward, *_ in fuzz.record_random_play(env, seed)[1]:
        totals[agent] += reward
    return totals


def play_episode(env, agents, seed: int) -> list[int]:
    """One episode of either game; every action asserted legal; the actions."""
    env.reset(seed=seed)
    actions = []
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[int(name.rsplit("_", 1)[1])].act(obs)
        assert obs["action_mask"][action] == 1
        actions.append(action)
        env.step(action)
    return actions
