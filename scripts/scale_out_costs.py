"""The cost model of docs/scale_out.md: CPU seconds per deal and per labelled position, one core, per agent.

    python scripts/scale_out_costs.py --deals 20 --out docs/scale_out_costs.json
    .venv-ray/bin/python scripts/scale_out_costs.py --deals 20 --ray --out docs/scale_out_costs.json

Each agent plays ``random`` on ``--deals`` deals in one process (``workers=1``, one BLAS thread); the process's
CPU time (not the wall clock: the reference machine is shared, its load is written next to the figures) over
the deals is the line-up's cost per deal. ``random`` against itself is the env's own cost; an agent's share of
a line-up is ``cost(A vs random) - cost(random vs random) / 2``, so X vs Y costs about ``share(X) + share(Y)``.
Labelling: the teacher labels every decision of a student (the shipped policy) over ``--label-deals`` deals;
the CPU time per position. With ``--ray``, also the wall time per Ray task of a local Ray (the scheduling
overhead a chunk pays) and a match's wall time over the process pool and over a local Ray.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

from cardenvs.agents.policy import load_policy, trained_path
from cardenvs.train.cluster import one_blas_thread
from cardenvs.train.config_files import config_from_dict
from cardenvs.train.distill import DistillConfig, label_arrays
from cardenvs.train.evaluate import EvalConfig, run_records

AGENTS = {
    "ring_rang": ["random", "rules_basic", "rules_strong", "trained", "gauntlet_reader", "pimc:iterations=100",
                  "pimc:iterations=500", "ismcts:iterations=500"],
    "rang": ["random", "rules_basic", "rules_strong", "trained", "gauntlet_racer", "pimc:iterations=100",
             "pimc:iterations=500", "ismcts:iterations=500"],
}
TEACHERS = ["pimc:iterations=200", "pimc:iterations=500", "pimc:iterations=1000"]


def cpu_per_deal(game: str, agents: list[str], deals: int) -> dict:
    config = EvalConfig(game=game, agents=agents, deals=deals, seed=0, progress=False)
    cpu, wall = time.process_time(), time.perf_counter()
    records = run_records(config)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu_s_per_deal": cpu / deals, "wall_s_per_deal": wall / deals, "episodes_per_deal": len(records) / deals,
            "decisions_per_deal": sum(r.decisions for r in records) / deals}


def label_cost(game: str, teacher: str, deals: int) -> dict:
    config = config_from_dict({"game": game, "student": str(trained_path(game)), "teacher": teacher,
                               "deals": deals, "chunk": deals, "run_dir": "/tmp/unused"}, "costs", DistillConfig)
    cpu = time.process_time()
    arrays = label_arrays((config, 0, load_policy(config.student), {}))
    cpu = time.process_time() - cpu
    positions = len(arrays["label"])
    return {"teacher": teacher, "positions": positions, "cpu_s_per_position": cpu / positions,
            "positions_per_deal": positions / deals}


def _nothing(job: int) -> int:
    return job


def ray_overheads(game: str, deals: int) -> dict:
    from cardenvs.train.cluster import cluster_cpus, fan_out

    start = time.perf_counter()
    cpus = cluster_cpus("local")
    startup = time.perf_counter() - start
    start = time.perf_counter()
    list(fan_out(_nothing, list(range(200)), 1, "local"))
    per_task = (time.perf_counter() - start) / 200
    config = EvalConfig(game=game, agents=["rules_strong", "rules_basic"], deals=deals, seed=0, progress=False,
                        workers=2)
    walls = {}
    for name, changes in (("process_pool", {}), ("local_ray", {"ray_address": "local"})):
        start = time.perf_counter()
        run_records(replace(config, **changes))
        walls[name] = time.perf_counter() - start
    return {"local_ray_cpus": cpus, "local_ray_start_s": startup, "wall_s_per_empty_task": per_task,
            "match_rules_strong_vs_rules_basic_deals": deals, "match_wall_s": walls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20, help="deals per line-up (search agents: a fifth)")
    parser.add_argument("--label-deals", type=int, default=2)
    parser.add_argument("--games", nargs="+", default=list(AGENTS))
    parser.add_argument("--ray", action="store_true", help="also the Ray overheads (needs the [ray] extra)")
    parser.add_argument("--out", help="write the figures here (JSON)")
    args = parser.parse_args()
    one_blas_thread()  # as in every worker process and Ray task
    result: dict = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg(),
                                "python": platform.python_version(), "processor": platform.processor()}}
    for game in args.games:
        rows = {}
        for agent in AGENTS[game]:
            deals = max(1, args.deals // 5) if ":" in agent else args.deals
            rows[agent] = {"deals": deals, **cpu_per_deal(game, [agent, "random"] if agent != "random"
                                                          else ["random", "random"], deals)}
            base = rows["random"]["cpu_s_per_deal"] / 2
            rows[agent]["agent_share_cpu_s_per_deal"] = rows[agent]["cpu_s_per_deal"] - base
            print(game, agent, json.dumps(rows[agent]), flush=True)
        result[game] = {"line_ups_vs_random": rows,
                        "labelling": [label_cost(game, teacher, args.label_deals) for teacher in TEACHERS]}
        print(game, "labelling", json.dumps(result[game]["labelling"]), flush=True)
    if args.ray:
        result["ray"] = ray_overheads(args.games[0], args.deals * 5)
        print("ray", json.dumps(result["ray"]), flush=True)
    result["machine"]["load_after"] = os.getloadavg()
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
