"""Scale-out (issue 37): the harness's chunks as Ray tasks give a local run's results; node loss, a bad agent,
resumable runs; agent files shipped with the tasks. The Ray tests run on a local two-node cluster
(``ray.cluster_utils.Cluster``) in the [ray] venv (.ci/run's RLlib stage) and are skipped where ray is missing;
the rest runs everywhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from cardenvs.agents.registry import make_agent
from cardenvs.train.cluster import local_spec, shipped_files, spec_files
from cardenvs.train.evaluate import ChunkFolder, EvalConfig, run_records, summarize
from cardenvs.train.evaluate import main as eval_main

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
POLICY = ROOT / "agents" / "policies" / "ring_rang.npz"


def stable(records) -> list[dict]:
    """The records without their timings, the one part that differs between two runs."""
    return [{k: v for k, v in asdict(r).items() if k not in ("seconds", "max_seconds")} for r in records]


def table(config, records) -> list[dict]:
    return summarize(config, records)["table"]


def first_seat_seed(config: EvalConfig, deal: int = 0) -> int:
    """The seed the harness resets the agent of seat 0 with in the first arrangement of ``deal``."""
    return int(np.random.SeedSequence([config.seed, deal, 0, 0]).generate_state(1)[0])


class StopAfter:
    """A progress bar that stops the run (as a preemption would) once ``deals`` deals are done."""

    def __init__(self, deals: int):
        self.deals, self.seen = deals, 0

    def update(self, n: int) -> None:
        self.seen += n
        if self.seen >= self.deals:
            raise KeyboardInterrupt

    def close(self) -> None:
        pass


# ------------------------------------------------------------- no Ray needed
def test_cardenvs_and_local_runs_import_no_ray():
    code = ("import sys, cardenvs; from cardenvs.train.evaluate import EvalConfig, evaluate; "
            "evaluate(EvalConfig(deals=2, workers=2, progress=False)); "
            "from cardenvs.train import benchmark, distill, exploit; print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_without_ray_the_option_fails_in_one_line_naming_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    assert eval_main(["--agents", "random", "random", "--deals", "2", "--ray-address", "local"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'cardenvs[ray]'" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match=r"cardenvs\[ray\]"):
        EvalConfig(ray_address="auto").validate()
    with pytest.raises(ValueError, match="ray_address"):
        EvalConfig(ray_address="").validate()


def test_shipped_files_reach_a_node_that_lacks_them(tmp_path):
    """A node without the head's disk plays a policy from the shipped bytes, nested specs included."""
    policy = tmp_path / "p.npz"
    shutil.copy(POLICY, policy)
    specs = [f"policy:path={policy}", f"pimc:iterations=4,rollout=policy:path={policy}", "random"]
    assert spec_files(specs) == [str(policy)]
    files = shipped_files(specs)
    policy.unlink()  # the node's view: no such file
    moved = [local_spec(spec, files) for spec in specs]
    assert str(policy) not in moved[0] + moved[1] and moved[2] == "random"
    assert moved[0].startswith("policy:path=") and moved[1].endswith(moved[0])
    agent = make_agent(moved[0], "ring_rang", seed=0)
    assert np.array_equal(agent.weights["action/weight"], np.load(POLICY)["action/weight"])
    make_agent(moved[1], "ring_rang", seed=0)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stopped_run_resumes_from_its_chunks_to_the_same_records(tmp_path, workers):
    config = EvalConfig(game="rang", agents=["random", "rules_basic", "rules_strong"], num_players=3, deals=12,
                        seed=5, workers=workers, progress=False)
    whole = run_records(config)
    chunks = tmp_path / "chunks"
    with pytest.raises(KeyboardInterrupt):
        run_records(replace(config, chunks=str(chunks)), bar=StopAfter(4))
    saved = sorted(p.name for p in chunks.glob("deals_*.json"))
    assert saved and (chunks / "run.json").exists()
    resumed = run_records(replace(config, chunks=str(chunks)))
    assert stable(resumed) == stable(whole)
    assert set(saved) <= {p.name for p in chunks.glob("deals_*.json")}  # what was saved was not played again
    more = run_records(replace(config, chunks=str(chunks), deals=14))  # more deals: the first 12 are kept
    assert stable(more)[:len(whole)] == stable(whole)


def test_a_chunk_folder_of_another_run_is_refused(tmp_path, capsys):
    chunks = tmp_path / "chunks"
    run_records(EvalConfig(deals=2, seed=1, chunks=str(chunks), progress=False))
    with pytest.raises(ValueError, match="another run"):
        run_records(EvalConfig(deals=2, seed=2, chunks=str(chunks), progress=False))
    assert eval_main(["--deals", "2", "--seed", "3", "--chunks", str(chunks), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "another run" in err and err.count("\n") == 1
    policy = tmp_path / "p.npz"  # a policy file changed in place is another run too
    shutil.copy(POLICY, policy)
    config = EvalConfig(agents=[f"policy:path={policy}", "random"], deals=1, progress=False)
    first = ChunkFolder(tmp_path / "policy_chunks", config)
    first.load()
    data = dict(np.load(policy))
    data["action/bias"] = data["action/bias"] + 1
    np.savez(policy, **data)
    with pytest.raises(ValueError, match="another run"):
        ChunkFolder(tmp_path / "policy_chunks", config).load()


def test_the_gauntlet_keeps_one_chunk_folder_per_match_and_resumes_from_them(tmp_path):
    from cardenvs.agents.registry import gauntlet_agents
    from cardenvs.train.evaluate import run_gauntlet

    config = EvalConfig(game="rang", agents=["rules_basic"], gauntlet=True, deals=2, progress=False,
                        chunks=str(tmp_path / "chunks"))
    first = run_gauntlet(config)
    folders = sorted(p for p in (tmp_path / "chunks").iterdir())
    assert len(folders) == len(gauntlet_agents("rang")) and all((f / "run.json").exists() for f in folders)
    assert run_gauntlet(config)["rows"] == first["rows"]


# ------------------------------------------------------- a two-node Ray cluster
@pytest.fixture(scope="module")
def cluster():
    """A head and one worker node, one CPU each (tests/ on their PYTHONPATH, as a user's module is installed
    on the nodes); stopped at the end."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), before) if p)
    sys.path.insert(0, str(TESTS))
    ray.shutdown()  # a Ray another test module started in this process
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        nodes.add_node(num_cpus=1)
        nodes.wait_for_nodes()
        ray.init(address=nodes.address, logging_level="ERROR")
        yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()
        sys.path.remove(str(TESTS))
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def both(config: EvalConfig, address: str, objects=None):
    return run_records(config, objects), run_records(replace(config, ray_address=address), objects)


@pytest.mark.parametrize("game, agents, players", [
    ("ring_rang", ["policy:path=POLICY", "rules_basic"], 4),
    ("rang", ["random", "rules_strong", "scale_out_agents:Slow", "pimc:iterations=6,worlds=2"], 3),
])
def test_ray_results_equal_a_local_runs(cluster, tmp_path, game, agents, players):
    policy = tmp_path / "policy.npz"
    shutil.copy(POLICY, policy)
    agents = [a.replace("POLICY", str(policy)) for a in agents]
    config = EvalConfig(game=game, agents=agents, num_players=players, deals=6, seed=3, workers=2, progress=False)
    local, remote = both(config, cluster.address)
    assert stable(remote) == stable(local) and table(config, remote) == table(config, local)


def test_ray_cli_writes_the_local_runs_results(cluster, tmp_path, capsys):
    argv = ["--game", "rang", "--agents", "random", "rules_basic", "--deals", "4", "--seed", "9", "--no-progress"]
    assert eval_main([*argv, "--out", str(tmp_path / "local")]) == 0
    assert eval_main([*argv, "--out", str(tmp_path / "ray"), "--ray-address", cluster.address,
                      "--chunks", str(tmp_path / "chunks")]) == 0
    local, remote = (json.loads((tmp_path / f / "results.json").read_text()) for f in ("local", "ray"))
    assert [r["deal"] for r in remote["records"]] == [r["deal"] for r in local["records"]]
    for result in (local, remote):
        del result["config"], result["timing"]
        for record in result["records"]:
            del record["seconds"], record["max_seconds"]
    assert remote == local
    assert (tmp_path / "local" / "results.csv").read_bytes() == (tmp_path / "ray" / "results.csv").read_bytes()
    assert sorted((tmp_path / "chunks").glob("deals_*.json"))


def test_a_node_without_the_policy_file_plays_it_from_the_shipped_arrays(cluster, tmp_path):
    from cardenvs.train.cluster import fan_out
    from cardenvs.train.evaluate import _play_chunk

    policy = tmp_path / "p.npz"
    shutil.copy(POLICY, policy)
    config = EvalConfig(agents=[f"policy:path={policy}", "random"], deals=2, progress=False)
    local = run_records(config)
    files = shipped_files(config.agents)
    nowhere = "/nonexistent/cardenvs/p.npz"  # a path no node has: the agent can only come from the bytes
    moved = replace(config, agents=[f"policy:path={nowhere}", "random"], ray_address=cluster.address)
    jobs = [(moved, [0, 1], {}, {nowhere: files[str(policy)]})]
    [(_, records)] = list(fan_out(_play_chunk, jobs, 1, cluster.address))
    strip = [{k: v for k, v in r.items() if k != "seats"} for r in stable(records)]
    assert strip == [{k: v for k, v in r.items() if k != "seats"} for r in stable(local)]


def test_gauntlet_and_benchmark_on_ray_equal_local(cluster, tmp_path):
    from cardenvs.train.benchmark import BenchmarkSettings, run_benchmark
    from cardenvs.train.benchmark import main as benchmark_main
    from cardenvs.train.evaluate import run_gauntlet

    config = EvalConfig(game="rang", agents=["rules_basic"], gauntlet=True, deals=2, seed=4, progress=False)
    config.validate()
    local = run_gauntlet(config)
    remote = run_gauntlet(replace(config, ray_address=cluster.address))
    assert remote["rows"] == local["rows"] and remote["worst"] == local["worst"]
    # a replay of revealed deals (a secret seed is drawn afresh for each run)
    settings = BenchmarkSettings(deals=2, opponents=["random", "rules_basic"], progress=False, seed=5)
    local = run_benchmark("rules_strong", "ring_rang", settings)
    remote = run_benchmark("rules_strong", "ring_rang", replace(settings, ray_address=cluster.address))
    assert remote["timing"]["workers"] == 2  # the cluster's CPUs
    for card in (local, remote):  # what varies between runs: the clocks (in the records too)
        del card["timing"]
        card["record"] = [[(r.deal, r.arrangement, r.actions, r.rewards) for r in match["episodes"]]
                          for match in card.pop("record")]
    assert remote == local
    assert benchmark_main(["--game", "rang", "--agent", "rules_basic", "--deals", "1", "--opponents", "random",
                           "--no-progress", "--ray-address", cluster.address, "--out", str(tmp_path / "b")]) == 0


def test_distill_labels_on_ray_equal_local(cluster, tmp_path):
    from cardenvs.train.config_files import config_from_dict
    from cardenvs.train.distill import DistillConfig, collect
    from cardenvs.train.distill import main as distill_main

    policy = tmp_path / "student.npz"
    shutil.copy(POLICY, policy)
    data = {"game": "ring_rang", "student": str(policy), "deals": 3, "chunk": 1, "workers": 1, "epochs": 1,
            "teacher": f"pimc:iterations=4,worlds=2,rollout=policy:path={policy}"}
    local = collect(config_from_dict({**data, "run_dir": str(tmp_path / "local")}, "t", DistillConfig), False)
    remote = collect(config_from_dict({**data, "run_dir": str(tmp_path / "ray"), "ray_address": cluster.address},
                                      "t", DistillConfig), False)
    assert [p.name for p in remote] == [p.name for p in local] and len(local) == 3
    for a, b in zip(local, remote, strict=True):
        with np.load(a) as x, np.load(b) as y:
            assert x.files == y.files and all(np.array_equal(x[k], y[k], equal_nan=True) for k in x.files)
    config = tmp_path / "distill.yaml"
    config.write_text(json.dumps({**data, "teacher": "random", "deals": 2, "run_dir": str(tmp_path / "cli")}))
    assert distill_main(["--config", str(config), "--ray-address", cluster.address, "--no-progress"]) == 0
    assert len(list((tmp_path / "cli" / "labels").glob("chunk_*.npz"))) == 2
    assert (tmp_path / "cli" / "policy.npz").exists()


def test_exploit_evaluation_on_ray_equals_local(cluster, tmp_path):
    pytest.importorskip("torch")
    from test_exploit import tiny_base

    from cardenvs.train.exploit import best_response_config, exploit

    config = best_response_config("rang", "rules_basic", 200, 0, str(tmp_path / "run"), 4,
                                  str(tiny_base(tmp_path, "rang")))
    evaluation = EvalConfig(game="rang", agents=["rules_basic"] * 2, deals=3, seed=1, progress=False)
    local = exploit(config, evaluation, str(tmp_path / "local"))
    remote = exploit(config, replace(evaluation, ray_address=cluster.address), str(tmp_path / "ray"))
    keys = ("best_response_win_rate", "win_rate_ci95", "best_response_mean_points", "episodes", "policy")
    assert {k: remote[k] for k in keys} == {k: local[k] for k in keys}


def test_a_bad_agent_fails_the_run_at_once_in_one_line(cluster, tmp_path, capsys):
    config = EvalConfig(game="rang", agents=["scale_out_agents:Slow:pause=0.01", "random"], num_players=2,
                        deals=16, seed=2, progress=False)
    bad = f"scale_out_agents:Slow:pause=0.01,fail_seed={first_seat_seed(config)}"
    chunks = tmp_path / "chunks"
    assert eval_main(["--game", "rang", "--num-players", "2", "--agents", bad, "random", "--deals", "16",
                      "--seed", "2", "--no-progress", "--ray-address", cluster.address, "--chunks", str(chunks)]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: the agent's own bug" in err and err.count("\n") == 1
    # deal 0 failed at once: the run stopped there, with the other chunks cancelled, not played to the end
    assert len(list(chunks.glob("deals_*.json"))) < 8


def test_a_lost_node_loses_nothing(cluster, tmp_path):
    """The worker node's raylet is killed while it plays: its chunks are retried on the head, the records are
    a local run's. A stopped run then resumes on the cluster from its chunk folder."""
    config = EvalConfig(game="rang", agents=["scale_out_agents:Slow:pause=0.004", "random"], num_players=2,
                        deals=16, seed=8, progress=False)
    local = run_records(config)
    worker = next(node for node in cluster.worker_nodes)

    class KillOnFirstChunk:
        killed = False

        def update(self, n: int) -> None:
            if n and not self.killed:
                self.killed = True
                cluster.remove_node(worker, allow_graceful=False)

        def close(self) -> None:
            pass

    bar = KillOnFirstChunk()
    try:
        remote = run_records(replace(config, ray_address=cluster.address), bar=bar)
        assert bar.killed and stable(remote) == stable(local)
    finally:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
    chunks = tmp_path / "chunks"
    on_ray = replace(config, ray_address=cluster.address, chunks=str(chunks))
    with pytest.raises(KeyboardInterrupt):
        run_records(on_ray, bar=StopAfter(2))
    assert stable(run_records(on_ray)) == stable(local)
