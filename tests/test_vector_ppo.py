"""The batched self-play PPO trainer (train/vector_ppo.py).

- reward crediting and GAE over each game's own learner decisions, against plain per-game loops;
- a tiny run in process: checkpoint, exact resume, export loaded by PolicyAgent with the same logits,
  evaluation rows through the harness; rule-based opponents in a few games;
- the CLI by subprocess (as CleanRL's smoke tests): the quick config's pipeline, --resume, the exported
  policy evaluated by the harness CLI; bad configs exit 2 naming the field.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from games import VECTOR_GAMES

from cardenvs.agents.policy import PolicyAgent, load_policy
from cardenvs.games import game_spec
from cardenvs.train.config_files import check_symmetries, config_from_dict, load_config
from cardenvs.train.runs import load_checkpoint
from cardenvs.train.vector_ppo import SELF as SELF_ID
from cardenvs.train.vector_ppo import (
    ActorCritic,
    Rollout,
    Seating,
    VectorPPOConfig,
    collect_rollout,
    decision_advantages,
    make_vector_env,
    train,
)

ROOT = Path(__file__).resolve().parents[1]
GAMES = VECTOR_GAMES


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny(game: str, run_dir: Path, **overrides) -> VectorPPOConfig:
    data = {
        "game": game, "run_dir": str(run_dir), "total_steps": 300, "num_envs": 16, "num_steps": 16,
        "minibatch_size": 64, "update_epochs": 2, "net_arch": [16],
        "league": {"self": 0.5, "snapshots": 0.3, "random": 0.2}, "snapshot_every": 100, "max_snapshots": 2,
        "eval_every": 10**6, "eval_deals": 2, "eval_opponents": ["random"], "checkpoint_every": 100,
        "log_every": 1,
    }
    data.update(overrides)
    return config_from_dict(data, "test", VectorPPOConfig)


def rollout_of(game: str, tmp_path: Path, num_steps: int, win_bonus: float = 0.0, win_loss: bool = False,
               **overrides) -> Rollout:
    config = tiny(game, tmp_path, num_envs=8, league={"random": 1.0}, **overrides)
    env = make_vector_env(config, torch.device("cpu"))
    model = ActorCritic(env.observation_size, env.num_actions, [16], "relu")
    generator = torch.Generator().manual_seed(3)
    seating = Seating(config, env.num_players, torch.device("cpu"), generator)
    obs, mask, info = env.reset()
    seating.draw(torch.arange(config.num_envs), 0)
    games = {"obs": obs, "mask": mask, "seat": info["seat"]}
    return collect_rollout(env, model, [], seating, games, generator, num_steps, torch.zeros(config.num_envs),
                           win_bonus, win_loss)


# ------------------------------------------------------ crediting and GAE
@pytest.mark.parametrize("game", GAMES)
def test_rewards_go_to_the_learners_open_decision(tmp_path, game):
    rollout = rollout_of(game, tmp_path, 150)
    T, B = rollout.values.shape
    assert rollout.done.any(), "the rollout should hold finished episodes"
    for b in range(B):
        expected_rewards = torch.zeros(T)
        expected_terminal = torch.zeros(T, dtype=torch.bool)
        open_decision = None
        for t in range(T):
            if rollout.is_decision[t, b]:
                open_decision = t
            if open_decision is not None:
                expected_rewards[open_decision] += rollout.earned[t, b]
            if rollout.done[t, b]:
                if open_decision is not None:
                    expected_terminal[open_decision] = True
                open_decision = None
        torch.testing.assert_close(rollout.rewards[:, b], expected_rewards)
        assert torch.equal(rollout.terminal[:, b], expected_terminal)
    # Every finished episode is counted; a RING RANG round pays only at its end, to its last learner decision.
    assert len(rollout.finished_returns) == int(rollout.done.sum())
    if game == "ring_rang":
        assert set(rollout.rewards[rollout.is_decision & ~rollout.terminal].unique().tolist()) <= {0.0}
        assert set(rollout.rewards[rollout.terminal].abs().unique().tolist()) <= {1.0, 2.0, 3.0}
        torch.testing.assert_close(rollout.rewards[rollout.terminal].sum(), (rollout.earned * rollout.done).sum())
    # The decisions are the learner side's: about half the env steps in RING RANG, a quarter in 4-player Rang.
    share = float(rollout.is_decision.float().mean())
    assert (0.4 < share < 0.6) if game == "ring_rang" else (0.15 < share < 0.35)


def reference_gae(rollout: Rollout, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    T, B = rollout.values.shape
    advantages, usable = torch.zeros(T, B), torch.zeros(T, B, dtype=torch.bool)
    for b in range(B):
        next_value = next_advantage = None
        for t in reversed([t for t in range(T) if rollout.is_decision[t, b]]):
            r, v = float(rollout.rewards[t, b]), float(rollout.values[t, b])
            if rollout.terminal[t, b]:
                a = r - v
            elif next_value is None:  # still open when the rollout stopped
                a = None
            else:
                a = r + gamma * next_value - v + gamma * lam * (next_advantage or 0.0)
            if a is not None:
                advantages[t, b], usable[t, b] = a, True
            next_value, next_advantage = v, a
    return advantages, usable


def test_win_bonus_goes_to_the_last_decision_of_deals_the_learner_went_out_of(tmp_path):
    torch.manual_seed(0)  # the same network weights for both rollouts: the same play
    plain = rollout_of("rang", tmp_path / "plain", 150)
    torch.manual_seed(0)
    shaped = rollout_of("rang", tmp_path / "shaped", 150, win_bonus=0.5)
    assert torch.equal(plain.earned, shaped.earned)  # same play: the env reward is untouched
    T, B = plain.values.shape
    expected = torch.zeros(T, B)
    for b in range(B):
        open_decision = None
        for t in range(T):
            if plain.is_decision[t, b]:
                open_decision = t
            if plain.done[t, b]:
                if open_decision is not None and plain.earned[t, b] == 0:  # scored nothing: went out
                    expected[open_decision, b] = 0.5
                open_decision = None
    assert expected.sum() > 0, "the rollout should hold deals the learner went out of"
    torch.testing.assert_close(shaped.rewards - plain.rewards, expected)


@pytest.mark.parametrize("game", GAMES)
def test_win_loss_reward_pays_the_result_at_the_end(tmp_path, game):
    torch.manual_seed(0)
    plain = rollout_of(game, tmp_path / "plain", 150)
    torch.manual_seed(0)
    results = rollout_of(game, tmp_path / "results", 150, win_loss=True)
    assert torch.equal(plain.earned, results.earned) and torch.equal(plain.terminal, results.terminal)
    # the same decisions are closed; each gets +1 for a won episode, -1 for a lost one, nothing before
    won = plain.rewards[plain.terminal] > 0 if game == "ring_rang" else None
    assert set(results.rewards[results.is_decision & ~results.terminal].unique().tolist()) <= {0.0}
    assert set(results.rewards[results.terminal].unique().tolist()) <= {-1.0, 1.0}
    if won is not None:  # a round's points are paid to its last learner decision alone: their sign is the result
        assert torch.equal(results.rewards[results.terminal] > 0, won)


def test_hidden_cards_are_what_the_deciding_seat_cannot_see():
    """RING RANG: the three blocks (seat+1, +2, +3) and the seat's own hand (its observation) split the cards
    not yet played (tracked here from the actions taken; before the trump choice the others' 39 cards of the
    deal); Rang: block k is seat+k's hand in eighths."""
    from cardenvs.ring_rang.observation import HAND

    env = make_vector_env(tiny("ring_rang", Path("unused"), num_envs=8), torch.device("cpu"))
    assert env.hidden_size == 3 * 52
    obs, mask, info = env.reset()
    played = torch.zeros(8, 52, dtype=torch.bool)
    generator = torch.Generator().manual_seed(1)
    for _ in range(60):  # past the end of a round: the tracker restarts with each new deal
        hidden = env.hidden_cards(info["seat"]).view(8, 3, 52)
        own = obs[:, HAND:HAND + 52] > 0
        assert set(hidden.unique().tolist()) <= {0.0, 1.0} and (hidden.sum(1) + own <= 1).all()  # disjoint
        chosen = env.trump >= 0  # before the choice the chooser sees 5 of its 13 cards; the others' 39 are hidden
        torch.testing.assert_close((hidden.sum(1) + own)[chosen], (~played).float()[chosen])
        assert (hidden[~chosen].sum((1, 2)) == 39).all()
        actions = torch.rand(mask.shape, generator=generator).masked_fill_(~mask, -1.0).argmax(1)
        played[torch.arange(8), actions.clamp(max=51)] |= actions < 52
        obs, mask, _, done, info = env.step(actions)
        played[done] = False
    rang = make_vector_env(tiny("rang", Path("unused"), num_envs=4), torch.device("cpu"))
    rang.reset()
    seat = torch.tensor([0, 1, 2, 3])
    hidden = rang.hidden_cards(seat).view(4, 3, -1)
    for b in range(4):
        for k in range(3):
            torch.testing.assert_close(hidden[b, k] * 8, rang.hands[b, (b + k + 1) % 4].float())


def test_sample_draws_from_the_masked_softmax():
    from cardenvs.train.vector_ppo import sample

    logits = torch.tensor([[0.0, 1.0, -1e9, 2.0]]).repeat(40000, 1)
    actions, log_probs = sample(logits, torch.Generator().manual_seed(0))
    shares = torch.bincount(actions, minlength=4) / len(actions)
    torch.testing.assert_close(shares, torch.softmax(logits[0], 0), atol=0.01, rtol=0)
    torch.testing.assert_close(log_probs, torch.log_softmax(logits, 1).gather(1, actions[:, None]).squeeze(1))


def test_training_seconds_stop_the_run_and_keep_policies(tmp_path):
    config = tiny("ring_rang", tmp_path / "run", total_steps=10**9, train_seconds=1.5, keep_every_seconds=0.5,
                  precision="bf16", reward="win_loss", anneal_lr=True, eval_at_start=True)
    train(config)
    curve = list(csv.DictReader((tmp_path / "run" / "curve.csv").open()))
    assert curve[0]["steps"] == "0" and int(curve[-1]["steps"]) > 0  # the untrained policy, then the end
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["train_s"] >= 1.5 and summary["steps"] < 10**9
    kept = sorted((tmp_path / "run" / "policies").glob("train_*s_step_*.npz"), key=lambda p: p.stat().st_mtime)
    marks = [float(p.name.split("_")[1][:-1]) for p in kept]
    assert len(kept) >= 2 and marks == sorted(marks)  # the first mark past 0.5 s, ..., and the end
    assert marks[-1] >= 1.5
    PolicyAgent(path=str(kept[-1]), game="ring_rang")  # each is a policy the harness loads


# ------------------------------------------- issue 44: the same result on any machine
AVX2_ONLY = "processor : 0\nflags : fpu sse2 avx avx2 fma\nprocessor : 1\nflags : fpu sse2 avx avx2 fma\n"
WITH_BF16 = "processor : 0\nflags : fpu avx2 avx512f avx512_bf16 amx_tile amx_bf16\n"


def test_precision_auto_takes_bf16_only_where_the_cpu_has_it_natively():
    from cardenvs.train.vector_ppo import choose_precision

    chosen, why = choose_precision("auto", "cpu", cpuinfo=AVX2_ONLY)
    assert chosen == "fp32" and "no avx512_bf16 or amx_bf16" in why and "emulated" in why
    chosen, why = choose_precision("auto", "cpu", cpuinfo=WITH_BF16)
    assert chosen == "bf16" and "avx512_bf16 and amx_bf16" in why
    # an explicit choice is kept, with the warning where it costs
    chosen, why = choose_precision("bf16", "cpu", cpuinfo=AVX2_ONLY)
    assert chosen == "bf16" and "precision: auto would take fp32" in why
    assert choose_precision("fp32", "cpu", cpuinfo=WITH_BF16)[0] == "fp32"
    # no x86 flags line (an ARM cpuinfo lists "Features"): torch's own queries decide, here mocked as none
    chosen, why = choose_precision("auto", "cpu", cpuinfo="processor : 0\nFeatures : fp asimd\n")
    assert chosen in ("fp32", "bf16") and "torch.cpu" in why


def test_progress_lines_say_decisions_done_the_rate_and_an_eta(tmp_path, capsys):
    from cardenvs.train.vector_ppo import progress_line

    line = progress_line(1_200_000, 4_000_000, 1_200_000, wall_s=120.0, train_s=100.0)
    assert line.startswith("progress: 1,200,000 / 4,000,000 decisions (30%), 12,000 decisions/s, ETA 4:40")
    train(tiny("ring_rang", tmp_path / "run", total_steps=1500, num_envs=8, progress_seconds=1e-6,
               precision="auto"))
    err = capsys.readouterr().err
    assert err.startswith("precision: ") and ("auto: this CPU has" in err)  # the choice and why, first
    progress = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert len(progress) >= 3 and all("/ 1,500 decisions" in line and "decisions/s, ETA " in line
                                      for line in progress)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["precision"] in ("fp32", "bf16") and summary["cpu"] and summary["precision_why"]


QUICK_CONFIGS = ["vector_quick_ring_rang.yaml", "vector_tts_ring_rang.yaml", "vector_tts_ring_rang_augment.yaml",
                 "vector_tts_rang.yaml"]


@pytest.mark.parametrize("name", QUICK_CONFIGS)
def test_quick_start_and_time_to_strength_configs_count_decisions_at_the_cpus_precision(name):
    """Issue 44 item 1: a fixed decision budget, no clock, precision chosen by the CPU; item 2: the Quick start's
    curve gets a point at least every 10% of the run (and the untrained policy's)."""
    config = load_config(ROOT / "configs" / name, VectorPPOConfig)
    assert config.train_seconds == 0 and config.keep_every_seconds == 0
    assert config.precision == "auto"
    assert 1_000_000 <= config.total_steps <= 50_000_000
    if name == "vector_quick_ring_rang.yaml":
        assert config.eval_every * 10 <= config.total_steps and config.eval_at_start
        assert 0 < config.progress_seconds <= 10
        script = (ROOT / "scripts" / "quickstart.sh").read_text()
        assert "configs/vector_quick_ring_rang.yaml" in script and "train_seconds" not in script


def test_init_from_copies_the_actor_and_checks_the_shape(tmp_path):
    from cardenvs.agents.policy import save_policy
    from cardenvs.train.vector_ppo import load_actor

    source = ActorCritic(82, 28, [16], "relu")
    path = tmp_path / "policy.npz"
    save_policy(source.export_weights("rang"), path)
    target = ActorCritic(82, 28, [16], "relu")
    load_actor(target, str(path))
    for name, array in source.export_weights("rang").items():
        if array.dtype != object and array.ndim:
            np.testing.assert_array_equal(target.export_weights("rang")[name], array)
    with pytest.raises(ValueError, match="init_from"):
        load_actor(ActorCritic(82, 28, [32], "relu"), str(path))
    with pytest.raises(ValueError, match="win_bonus"):
        tiny("ring_rang", tmp_path, win_bonus=1.0)


@pytest.mark.parametrize("gamma, lam", [(1.0, 0.95), (0.9, 0.5)])
def test_gae_runs_over_each_games_own_decisions(gamma, lam):
    generator = torch.Generator().manual_seed(0)
    T, B = 40, 6
    is_decision = torch.rand(T, B, generator=generator) < 0.5
    terminal = is_decision & (torch.rand(T, B, generator=generator) < 0.15)
    rollout = Rollout(
        is_decision=is_decision, values=torch.randn(T, B, generator=generator) * is_decision,
        rewards=torch.randn(T, B, generator=generator) * is_decision, terminal=terminal,
        slot=torch.full((T, B), -1), obs=torch.zeros(0), mask=torch.zeros(0), actions=torch.zeros(0),
        log_probs=torch.zeros(0), earned=torch.zeros(T, B), done=torch.zeros(T, B, dtype=torch.bool),
        finished_returns=[],
    )
    advantages, usable = decision_advantages(rollout, gamma, lam)
    expected_advantages, expected_usable = reference_gae(rollout, gamma, lam)
    assert torch.equal(usable, expected_usable)
    torch.testing.assert_close(advantages, expected_advantages)


# ------------------------------------------------------- runs in process
@pytest.mark.parametrize("game", GAMES)
def test_tiny_run_checkpoints_resumes_exactly_and_exports(tmp_path, game):
    straight = train(tiny(game, tmp_path / "straight", total_steps=600))
    first = train(tiny(game, tmp_path / "split", total_steps=300))
    folder, state = load_checkpoint(tmp_path / "split")
    assert state["steps"] >= 300 and (folder / "model.pt").exists()
    resumed = train(tiny(game, tmp_path / "split", total_steps=600), resume=True)
    assert first == resumed
    a, b = load_policy(straight), load_policy(resumed)
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(a[key], b[key]), key  # the resumed run is the straight run, bit for bit

    # The export is the actor: PolicyAgent (numpy) computes the model's logits.
    folder, _ = load_checkpoint(tmp_path / "straight")
    env = make_vector_env(tiny(game, tmp_path), torch.device("cpu"))
    model = ActorCritic(env.observation_size, env.num_actions, [16], "relu")
    model.load_state_dict(torch.load(folder / "model.pt", weights_only=True)["model"])
    obs, mask, _ = env.reset()
    agent = PolicyAgent(path=str(straight), game=game)
    with torch.no_grad():
        expected = model.action(model.actor_body(obs)).numpy()
    np.testing.assert_allclose(agent.logits(obs.numpy()), expected, rtol=1e-4, atol=1e-5)

    # The evaluation through the harness wrote the learning curve (at the end of each run).
    rows = list(csv.DictReader((tmp_path / "straight" / "curve.csv").open()))
    assert [r["opponent"] for r in rows] == ["random"] and int(rows[0]["episodes"]) > 0
    summary = json.loads((tmp_path / "straight" / "summary.json").read_text())
    assert summary["env_steps_per_s_this_session"] > 0 and summary["decisions_per_s_this_session"] > 0


@pytest.mark.parametrize("game", GAMES)
def test_critic_with_hidden_cards_resumes_exactly_and_exports_the_actor_alone(tmp_path, game):
    straight = train(tiny(game, tmp_path / "straight", total_steps=400, critic_hidden_cards=True))
    train(tiny(game, tmp_path / "split", total_steps=200, critic_hidden_cards=True))
    resumed = train(tiny(game, tmp_path / "split", total_steps=400, critic_hidden_cards=True), resume=True)
    a, b = load_policy(straight), load_policy(resumed)
    assert all(np.array_equal(a[key], b[key]) for key in a)
    env = make_vector_env(tiny(game, tmp_path), torch.device("cpu"))
    folder, _ = load_checkpoint(tmp_path / "straight")
    critic_input = torch.load(folder / "model.pt", weights_only=True)["model"]["critic.0.weight"].shape[1]
    assert critic_input == env.observation_size + env.hidden_size
    assert a["hidden0/weight"].shape == (16, env.observation_size)  # the policy sees its observation only


SYMMETRIC_GAMES = [game for game in GAMES if "symmetries" in game_spec(game).parts]


@pytest.mark.parametrize("game", SYMMETRIC_GAMES)
def test_augmented_updates_rename_legal_decisions_and_resume_exactly(tmp_path, game):
    """augment: the actor's minibatches renamed by the game's symmetries; the renamed action of a decision is
    legal in the renamed mask, and the draws come from the run's generator (a resumed run is the straight run)."""
    env = make_vector_env(tiny(game, tmp_path), torch.device("cpu"))
    obs, mask, _ = env.reset()
    actions = torch.multinomial(mask.float(), 1).squeeze(1)
    for index, action_map in check_symmetries(game_spec(game), env.observation_size, env.num_actions):
        renamed = mask[:, np.argsort(action_map)]
        assert renamed[torch.arange(len(actions)), torch.as_tensor(action_map)[actions]].all()
        assert renamed.sum(1).tolist() == mask.sum(1).tolist() and obs[:, index].sum() == obs.sum()
    straight = train(tiny(game, tmp_path / "straight", total_steps=400, augment=True))
    train(tiny(game, tmp_path / "split", total_steps=200, augment=True))
    resumed = train(tiny(game, tmp_path / "split", total_steps=400, augment=True), resume=True)
    a, b = load_policy(straight), load_policy(resumed)
    assert all(np.array_equal(a[key], b[key]) for key in a)
    plain = load_policy(train(tiny(game, tmp_path / "plain", total_steps=400)))
    assert not all(np.array_equal(a[key], plain[key]) for key in a)  # the renaming changed the updates


@pytest.mark.parametrize("game", [game for game in GAMES if game not in SYMMETRIC_GAMES][:1])
def test_augment_needs_the_games_symmetries(tmp_path, game):
    with pytest.raises(ValueError, match="augment: .* declares no symmetries"):
        tiny(game, tmp_path, augment=True)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.slow
def test_resume_with_rule_games_is_bit_exact(tmp_path, game):
    """Issue 19 item 7: the rule agents of the games in flight are checkpointed as data (spec, RNG, memory);
    loading them draws nothing from the seating's generator, so the resumed run is the straight run."""
    rules = {"rule_games": 4, "rule_opponents": {"rules_strong": 1.0, "rules_basic": 1.0, "random": 1.0}}
    straight = train(tiny(game, tmp_path / "straight", total_steps=600, **rules))
    train(tiny(game, tmp_path / "split", total_steps=300, **rules))
    resumed = train(tiny(game, tmp_path / "split", total_steps=600, **rules), resume=True)
    a, b = load_policy(straight), load_policy(resumed)
    for key in a:
        assert np.array_equal(a[key], b[key]), key


@pytest.mark.parametrize("game", GAMES)
def test_rule_opponents_in_a_few_games(tmp_path, game):
    config = tiny(game, tmp_path / "rules", rule_games=3, rule_opponents={"rules_basic": 1.0, "random": 1.0},
                  total_steps=200)
    policy = train(config)
    assert PolicyAgent(path=str(policy), game=game).input_size > 0


@pytest.mark.parametrize("fields, message", [
    ({"league": {"snapshots": 1.0}}, "league"),
    ({"league": {"self": 1.0, "bogus": 1.0}}, "league"),
    ({"rule_games": 99}, "rule_games"),
    ({"num_steps": 0}, "num_steps"),
    ({"rule_opponents": {"nobody": 1.0}}, "rule_opponents"),
    ({"rule_games": 2, "rule_opponents": {"pimc": 1.0}}, "search agent"),
    ({"minibatch": 5}, "minibatch"),
    ({"net_arch": "big"}, "net_arch"),
    # issue 18 item 1: found before any work, as one line
    ({"init_from": "missing/policy.npz"}, "init_from: no policy file"),
    ({"device": "bogus"}, "device: 'bogus' is not a torch device"),
    ({"eval_opponents": ["pimc:iterations=-5"]}, "eval_opponents: .*iterations must be"),
    ({"reward": "points"}, "reward: expected 'env' or 'win_loss'"),
    ({"precision": "fp16"}, "precision: expected one of \\('auto', 'fp32', 'bf16'\\)"),
    ({"progress_seconds": -1}, "progress_seconds"),
    ({"train_seconds": -1}, "train_seconds"),
])
def test_bad_config_fields_are_named(tmp_path, fields, message):
    with pytest.raises(ValueError, match=message):
        tiny("ring_rang", tmp_path, **fields)


def test_refuses_to_overwrite_or_resume_what_is_not_there(tmp_path):
    with pytest.raises(ValueError, match="no checkpoint"):
        train(tiny("rang", tmp_path / "none"), resume=True)
    train(tiny("rang", tmp_path / "run", total_steps=50))
    with pytest.raises(ValueError, match="already holds a run"):
        train(tiny("rang", tmp_path / "run", total_steps=50))
    with pytest.raises(ValueError, match="num_envs"):
        train(tiny("rang", tmp_path / "run", total_steps=100, num_envs=8), resume=True)


# ------------------------------------------------------------ subprocess
def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_quick_config_trains_resumes_and_the_harness_evaluates_the_export(tmp_path, game):
    data = yaml.safe_load((ROOT / f"configs/vector_quick_{game}.yaml").read_text())
    data.update(run_dir=str(tmp_path / "run"), total_steps=6000, eval_every=10**6, eval_deals=3,
                eval_opponents=["random"], checkpoint_every=2000, log_every=1)
    config_path = tmp_path / "quick.yaml"
    config_path.write_text(yaml.safe_dump(data))
    done = run_cli("-m", "cardenvs.train.vector_ppo", "--config", str(config_path))
    assert done.returncode == 0, done.stderr
    assert "iter 1 " in done.stderr and "env steps/s" in done.stderr and "decisions/s" in done.stderr
    steps = json.loads((tmp_path / "run" / "checkpoints" / "latest.json").read_text())["steps"]

    data["total_steps"] = steps + 4000
    config_path.write_text(yaml.safe_dump(data))
    resumed = run_cli("-m", "cardenvs.train.vector_ppo", "--config", str(config_path), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed {tmp_path / 'run'} at step {steps}" in resumed.stderr
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["steps"] >= steps + 4000
    assert (tmp_path / "run" / "learning_curve.png").exists()

    policy = tmp_path / "run" / "policy.npz"
    evaluated = run_cli("-m", "cardenvs.train.evaluate", "--game", game, "--agents", f"policy:path={policy}",
                        "random", "--deals", "4", "--out", str(tmp_path / "eval"))
    assert evaluated.returncode == 0, evaluated.stderr
    table = json.loads((tmp_path / "eval" / "results.json").read_text())["table"]
    assert any(row["agent"] == f"policy:path={policy}" and row["episodes"] > 0 for row in table)


@pytest.mark.slow
def test_time_to_strength_counts_decisions_by_default(tmp_path):
    """Issue 44: scripts/time_to_strength.py trains the config's total_steps decisions (no clock), keeps a policy
    every fifth, measures each, and writes the run's decisions a second, precision and CPU beside them."""
    data = yaml.safe_load((ROOT / "configs/vector_tts_ring_rang.yaml").read_text())
    data.update(num_envs=16, num_steps=16, net_arch=[16], rule_games=2, total_steps=2000, snapshot_every=500,
                minibatch_size=64)
    config_path = tmp_path / "tts.yaml"
    config_path.write_text(yaml.safe_dump(data))
    done = run_cli("scripts/time_to_strength.py", "--config", str(config_path), "--seeds", "0", "--deals", "1",
                   "--workers", "1", "--out", str(tmp_path / "tts"))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "tts" / "time_to_strength.csv").open()))
    decisions = [int(row["decisions"]) for row in rows]
    assert len(rows) == 5 and decisions == sorted(decisions) and decisions[-1] >= 2000
    assert all(row["cpu"] and row["precision"] in ("fp32", "bf16") and int(row["decisions_per_s"]) > 0
               for row in rows)
    used = yaml.safe_load((tmp_path / "tts" / "seed0" / "tts_config.yaml").read_text())
    assert used["train_seconds"] == 0 and used["total_steps"] == 2000


@pytest.mark.slow
def test_cli_bad_config_exits_2_naming_the_field(tmp_path):
    config_path = tmp_path / "bad.yaml"
    config_path.write_text("game: rang\nnum_envz: 4\n")
    done = run_cli("-m", "cardenvs.train.vector_ppo", "--config", str(config_path))
    assert done.returncode == 2 and "num_envz" in done.stderr
    config_path.write_text("game: rang\ninit_from: nope.npz\n")
    done = run_cli("-m", "cardenvs.cli", "train-vector", "--config", str(config_path), "--run-dir",
                   str(tmp_path / "run"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "init_from: no policy file 'nope.npz'; give a policy.npz of an earlier run" in done.stderr
    assert not (tmp_path / "run").exists()


# ----------------------------------------------------- league: PFSP, fixed policies
def test_pfsp_draws_the_snapshots_the_learner_loses_to_more_often(tmp_path):
    config = tiny("ring_rang", tmp_path, pfsp=2.0, max_snapshots=3)
    seating = Seating(config, 4, torch.device("cpu"), torch.Generator().manual_seed(0))
    assert seating.snapshot_weights(3, 0.6) == pytest.approx([0.2, 0.2, 0.2])  # no results yet: the prior
    # game 0: learner team 0 against slot 2, lost; game 1: learner team 1 against slot 0, won
    seating.learner_side[:2] = torch.tensor([0, 1])
    seating.opponent[0] = torch.tensor([SELF_ID, 2])
    seating.opponent[1] = torch.tensor([0, SELF_ID])
    for _ in range(10):
        seating.record(torch.tensor([0, 1]), torch.tensor([-2.0, 3.0]))
    assert seating.results[:3].tolist() == [[10.0, 10.0], [0.0, 0.0], [0.0, 10.0]]
    weights = seating.snapshot_weights(3, 0.6)
    assert sum(weights) == pytest.approx(0.6) and weights[2] > weights[1] > weights[0]
    seating.forget(2)
    assert seating.results[2].tolist() == [0.0, 0.0]
    uniform = tiny("ring_rang", tmp_path, max_snapshots=3)
    assert Seating(uniform, 4, torch.device("cpu"), torch.Generator()).snapshot_weights(3, 0.6) == \
        pytest.approx([0.2] * 3)


def test_fixed_policies_stay_in_the_league(tmp_path):
    first = train(tiny("rang", tmp_path / "a", total_steps=200))
    config = tiny("rang", tmp_path / "b", total_steps=400, fixed_policies=[str(first)], max_snapshots=1,
                  snapshot_every=100, league={"self": 0.5, "snapshots": 0.5})
    train(config)
    folder = tmp_path / "b" / "checkpoints"
    latest = sorted(folder.glob("step_*"), key=lambda p: int(p.name[5:]))[-1]
    names = [str(n) for n in np.load(latest / "league.npz")["names"]]
    assert names[0] == f"fixed:{first}" and len(names) == 2 and names[1].startswith("step_")
    with pytest.raises(ValueError, match="fixed_policies"):
        tiny("rang", tmp_path / "c", fixed_policies=[str(tmp_path / "missing.npz")])


def test_hand_edited_checkpoint_with_valid_hashes_is_a_checkpoint_error(tmp_path):
    """Data only, and no traceback: a model.pt missing a key, re-hashed, stops the resume with CheckpointError."""
    import hashlib

    from cardenvs.train.runs import CheckpointError

    config = tiny("rang", tmp_path / "run", total_steps=200)
    train(config)
    root = tmp_path / "run" / "checkpoints"
    pointer = json.loads((root / "latest.json").read_text())
    model = root / pointer["folder"] / "model.pt"
    saved = torch.load(model, weights_only=True)
    torch.save({"model": saved["model"]}, model)  # the optimizer state is gone
    pointer["sha256"]["model.pt"] = hashlib.sha256(model.read_bytes()).hexdigest()
    (root / "latest.json").write_text(json.dumps(pointer))
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        train(tiny("rang", tmp_path / "run", total_steps=400), resume=True)
