#!/usr/bin/env bash
# The main job on a fresh machine: install, train a RING RANG policy from scratch with the batched
# trainer (configs/vector_quick_ring_rang.yaml: 4M learner decisions, the same policy on any machine; about
# 4 minutes on an idle 2-core machine with AVX512-BF16, longer on a slower or busier one: the trainer prints
# its progress, decisions a second and ETA every 10 s), show its learning curve, and evaluate it, beside the
# shipped `trained` policy for scale, against random and rules_basic (500 duplicate deals each, eval seed
# 777: not the training seed, not the curve's deals).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"   # first, pinned: the CPU build where the index serves it (as on the
# reference machine); from stock PyPI add --index-url https://download.pytorch.org/whl/cpu (README, Install)
python -m pip install -q -e ".[train]"
run="runs/quickstart-$(date +%Y%m%d-%H%M%S)"
start=$(date +%s)
cardenvs train-vector --config configs/vector_quick_ring_rang.yaml --run-dir "$run"
echo "trained in $(( $(date +%s) - start )) s (evaluations included); learning curve: $run/learning_curve.png"
for agent in "policy:path=$run/policy.npz" trained; do
  for opponent in random rules_basic; do
    cardenvs eval --game ring_rang --agents "$agent" "$opponent" --deals 500 --seed 777 --workers 2 --no-progress \
      --out "$run/eval/${agent%%:*}_vs_$opponent" > /dev/null
  done
done
python - "$run" <<'PY'
import json, pathlib, sys
run = pathlib.Path(sys.argv[1])
print(f"\n{'agent':<22} {'opponent':<12} {'win rate':>8}  95% CI          (500 duplicate deals = 1,000 rounds, seed 777)")
for result in sorted((run / "eval").glob("*/results.json")):
    data = json.loads(result.read_text())
    row = next(r for r in data["table"] if r["agent"] == data["config"]["agents"][0])
    agent, opponent = result.parent.name.split("_vs_")
    name = "this run's policy" if agent == "policy" else "trained (shipped)"
    low, high = row["win_rate_ci95"]
    print(f"{name:<22} {opponent:<12} {row['win_rate']:>8.3f}  [{low:.3f}, {high:.3f}]")
PY
