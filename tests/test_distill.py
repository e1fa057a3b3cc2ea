"""cardenvs distill: positions of the student labelled by a search agent, the student's network fitted to them."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from cardenvs.agents.policy import PolicyAgent, policy_layers
from cardenvs.train.config_files import config_from_dict
from cardenvs.train.distill import DistillConfig, collect, fit, fit_labels, label_chunk

ROOT = Path(__file__).resolve().parents[1]
STUDENT = str(ROOT / "agents" / "policies" / "ring_rang.npz")


def tiny(tmp_path: Path, **overrides) -> DistillConfig:
    data = {"game": "ring_rang", "run_dir": str(tmp_path / "run"), "student": STUDENT,
            "teacher": "pimc:iterations=8,worlds=2", "deals": 4, "chunk": 2, "workers": 1, "epochs": 2}
    data.update(overrides)
    return config_from_dict(data, "test", DistillConfig)


def test_labels_are_the_teachers_choices_on_legal_actions_and_chunks_are_deterministic(tmp_path):
    config = tiny(tmp_path)
    paths = collect(config, progress=False)
    assert [p.name for p in paths] == ["chunk_00000.npz", "chunk_00001.npz"]
    with np.load(paths[0], allow_pickle=False) as data:
        masks, labels = data["mask"], data["label"]
        assert len(labels) > 50 and masks[np.arange(len(labels)), labels].all()
        first = data["observation"].copy()
    again = tiny(tmp_path / "again")
    with np.load(label_chunk((again, 0)), allow_pickle=False) as data:
        assert np.array_equal(data["observation"], first) and np.array_equal(data["label"], labels)


def test_fit_moves_the_student_toward_the_labels_and_exports_a_policy(tmp_path):
    config = tiny(tmp_path, epochs=6, learning_rate=0.003)
    policy = fit(config, collect(config, progress=False))
    rows = list(csv.DictReader((tmp_path / "run" / "fit.csv").open()))
    assert float(rows[-1]["train_accuracy"]) > float(rows[0]["train_accuracy"])
    assert rows[0]["held_out_accuracy"] != ""
    PolicyAgent(path=str(policy), game="ring_rang")  # loads, numpy only


def test_rang_positions_are_labelled_by_a_search_that_remembers_the_students_discards(tmp_path):
    """The teacher's own-discard memory follows the moves made (the student's), not its proposals."""
    config = tiny(tmp_path, game="rang", student=str(ROOT / "agents" / "policies" / "rang.npz"),
                  teacher="ismcts:iterations=6", deals=6, chunk=3)
    paths = collect(config, progress=False)
    with np.load(paths[0], allow_pickle=False) as data:
        masks, labels = data["mask"], data["label"]
        assert len(labels) > 30 and masks[np.arange(len(labels)), labels].all()


def test_a_run_again_keeps_the_chunks_it_has(tmp_path):
    config = tiny(tmp_path)
    first = collect(config, progress=False)[0]
    stamp = first.stat().st_mtime_ns
    collect(config, progress=False)
    collect(tiny(tmp_path, workers=2), progress=False)  # every chunk saved: no pool of zero workers is started
    assert first.stat().st_mtime_ns == stamp


@pytest.mark.parametrize("field,value,message", [("student", "nope.npz", "student"), ("teacher", "nobody", "unknown"),
                                                 ("deals", 0, "deals"), ("game", "chess", "game")])
def test_bad_configs_are_refused_naming_the_field(tmp_path, field, value, message):
    with pytest.raises(ValueError, match=message):
        tiny(tmp_path, **{field: value})


@pytest.mark.slow
def test_cli(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"game": "ring-rang", "run_dir": str(tmp_path / "run"), "student": STUDENT,
                                    "teacher": "random", "deals": 2, "chunk": 1, "workers": 2, "epochs": 1}))
    done = subprocess.run([sys.executable, "-m", "cardenvs.cli", "distill", "--config", str(path), "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run" / "policy.npz").exists()
    bad = subprocess.run([sys.executable, "-m", "cardenvs.cli", "distill", "--config", str(tmp_path / "x.yaml")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


def test_include_labels_aggregates_an_earlier_rounds_positions(tmp_path):
    first = tiny(tmp_path / "one")
    first_paths = collect(first, progress=False)
    second = tiny(tmp_path / "two", seed=7, include_labels=[str(tmp_path / "one" / "run")])
    paths = fit_labels(second, progress=False)
    assert len(paths) == 4
    fit(second, paths)
    rows = list(csv.DictReader((tmp_path / "two" / "run" / "fit.csv").open()))
    counts = [len(np.load(p)["label"]) for p in paths]
    assert int(rows[0]["positions"]) == sum(counts) - counts[0]  # the first chunk of this round is held out
    assert len(first_paths) == 2
    with pytest.raises(ValueError, match="include_labels"):
        tiny(tmp_path / "three", include_labels=[str(tmp_path / "nothing")])


def test_labels_hold_the_teachers_action_values_and_its_choice_is_their_best(tmp_path):
    """PIMC's mean rollout reward of every action it tried is stored beside its choice (NaN elsewhere)."""
    config = tiny(tmp_path)
    with np.load(label_chunk((config, 0)), allow_pickle=False) as data:
        masks, labels, values = data["mask"], data["label"], data["value"]
    known = np.isfinite(values)
    assert values.shape == masks.shape and not (known & ~masks).any()  # values only on legal actions
    searched = known.sum(axis=1) >= 2
    assert searched.any() and (~known[masks.sum(axis=1) == 1]).all()  # one legal action: no search, no values
    best = np.where(known, values, -np.inf)[searched].max(axis=1)
    assert np.allclose(values[searched, labels[searched]], best)


def test_value_targets_are_a_softmax_over_the_known_values_else_the_choice():
    from cardenvs.train.distill import value_targets

    values = np.full((2, 4), np.nan, np.float32)
    values[0, [1, 3]] = [1.0, 0.0]  # row 1 has no values: its target is the one-hot choice
    targets = value_targets(np.array([1, 2]), 4, values, temperature=0.5)
    assert np.allclose(targets[0], [0.0, 1 / (1 + np.exp(-2)), 0.0, np.exp(-2) / (1 + np.exp(-2))])
    assert np.array_equal(targets[1], [0.0, 0.0, 1.0, 0.0])
    assert np.array_equal(value_targets(np.array([1, 2]), 4, values, None), np.eye(4)[[1, 2]])


def test_a_values_fit_moves_the_student_toward_the_teacher(tmp_path):
    config = tiny(tmp_path, epochs=6, learning_rate=0.003, target="values", temperature=0.5)
    fit(config, collect(config, progress=False))
    rows = list(csv.DictReader((tmp_path / "run" / "fit.csv").open()))
    assert float(rows[-1]["train_accuracy"]) > float(rows[0]["train_accuracy"])


def test_keep_best_exports_the_epoch_with_the_best_held_out_agreement(tmp_path):
    config = tiny(tmp_path, epochs=4, learning_rate=0.01, keep="best")
    paths = collect(config, progress=False)
    policy = PolicyAgent(path=str(fit(config, paths)), game="ring_rang")
    rows = list(csv.DictReader((tmp_path / "run" / "fit.csv").open()))
    with np.load(paths[0], allow_pickle=False) as held_out:  # the first chunk is held out
        chosen = policy.probabilities(held_out["observation"], held_out["mask"]).argmax(axis=1)
        agreement = float(np.mean(chosen == held_out["label"]))
    assert agreement == pytest.approx(max(float(r["held_out_accuracy"]) for r in rows), abs=1e-3)


def test_a_fresh_network_fitted_on_renamed_suits_learns_and_exports_its_sizes(tmp_path):
    config = tiny(tmp_path, epochs=4, learning_rate=0.003, net_arch=[32, 16], activation="tanh", augment=True)
    policy = PolicyAgent(path=str(fit(config, collect(config, progress=False))), game="ring_rang")
    assert [w.shape for w, _ in policy_layers(policy.weights)] == [(32, 639), (16, 32), (57, 16)]
    assert str(policy.weights["activation"]) == "tanh"
    rows = list(csv.DictReader((tmp_path / "run" / "fit.csv").open()))
    assert float(rows[-1]["train_accuracy"]) > float(rows[0]["train_accuracy"])


@pytest.mark.parametrize("fields,message", [({"target": "both"}, "target"), ({"temperature": 0.0}, "temperature"),
                                            ({"keep": "first"}, "keep"), ({"net_arch": [0]}, "net_arch"),
                                            ({"net_arch": [8], "activation": "gelu"}, "activation"),
                                            ({"game": "rang", "augment": True}, "no symmetries"),
                                            ({"target": "values", "teacher": "rules_strong"}, "keeps action values")])
def test_bad_value_targets_are_refused(tmp_path, fields, message):
    with pytest.raises(ValueError, match=message):
        tiny(tmp_path, **fields)
