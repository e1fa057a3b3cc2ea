#!/usr/bin/env bash
# The strength figures of README "Strength against opponents never trained on" and docs/strength.md,
# for the shipped policies (`trained`); outputs in docs/strength/<name>/. About 2 h on 2 cores.
set -euo pipefail
W="${WORKERS:-2}"
S=docs/strength
cardenvs eval --game ring_rang --agents trained rules_strong --deals 2000 --workers "$W" --seed 0 --no-progress --out $S/ring_rang_trained_vs_rules_strong
cardenvs eval --game ring_rang --agents trained rules_strong --deals 1000 --workers "$W" --seed 1 --no-progress --out $S/ring_rang_trained_vs_rules_strong_seed1
cardenvs eval --game ring_rang --agents trained --gauntlet --deals 1000 --workers "$W" --seed 0 --no-progress --out $S/gauntlet_ring_rang_trained
cardenvs eval --game ring_rang --agents trained pimc:iterations=500 --deals 1000 --workers "$W" --seed 0 --no-progress --out $S/ring_rang_trained_vs_pimc500
cardenvs eval --game ring_rang --agents trained pimc:iterations=500 --deals 1000 --workers "$W" --seed 1 --no-progress --out $S/ring_rang_trained_vs_pimc500_seed1
cardenvs eval --game ring_rang --agents trained random --deals 2000 --workers "$W" --seed 0 --no-progress --out $S/ring_rang_trained_vs_random
cardenvs exploit --game ring_rang --agent trained --steps 400000 --deals 500 --out $S/exploit_ring_rang_trained
cardenvs eval --game ring_rang --agents trained rules_strong rules_basic random gauntlet_hoarder gauntlet_lifter gauntlet_reader gauntlet_supporter --deals 200 --workers "$W" --seed 0 --no-progress --out $S/ladder_ring_rang
# the longer budgets (7.5 and 10 times the above; about 40 minutes more)
for agent in trained rules_strong; do
  cardenvs exploit --game ring_rang --agent $agent --steps 3000000 --deals 500 --out $S/exploit3m_ring_rang_$agent
  cardenvs exploit --game rang --agent $agent --steps 2000000 --deals 1000 --workers "$W" --out $S/exploit2m_rang_$agent
done
cardenvs exploit --game ring_rang --agent trained --steps 3000000 --deals 500 --seed 1 --out $S/exploit3m_ring_rang_trained_seed1
cardenvs exploit --game rang --agent trained --steps 2000000 --deals 1000 --workers "$W" --seed 1 --out $S/exploit2m_rang_trained_seed1
cardenvs eval --game rang --agents trained rules_strong --deals 2000 --workers "$W" --seed 0 --no-progress --out $S/rang_distill_round6_vs_rules_strong
cardenvs eval --game rang --agents trained rules_strong --deals 2000 --workers "$W" --seed 1 --no-progress --out $S/rang_trained_vs_rules_strong_seed1
cardenvs eval --game rang --agents trained random --deals 2000 --workers "$W" --seed 0 --no-progress --out $S/rang_trained_vs_random
cardenvs eval --game rang --agents trained --gauntlet --deals 2000 --workers "$W" --seed 0 --no-progress --out $S/gauntlet_rang_trained
for seed in 1 777 4242; do
  cardenvs eval --game rang --agents trained --gauntlet --deals 2000 --workers "$W" --seed $seed --no-progress --out $S/gauntlet_rang_trained_seed$seed
done
python scripts/pool_gauntlets.py $S/gauntlet_rang_trained $S/gauntlet_rang_trained_seed{1,777,4242}
cardenvs exploit --game rang --agent trained --steps 200000 --deals 1000 --workers "$W" --out $S/exploit_rang_trained
cardenvs exploit --game rang --agent trained --steps 200000 --deals 1000 --workers "$W" --seed 1 --out $S/exploit_rang_trained_seed1
cardenvs eval --game rang --agents trained rules_basic --deals 1000 --workers "$W" --seed 0 --no-progress --out $S/rang_trained_vs_rules_basic
cardenvs eval --game rang --agents trained rules_strong rules_basic random gauntlet_blocker gauntlet_dumper gauntlet_escaper gauntlet_racer --deals 30 --workers "$W" --seed 0 --no-progress --out $S/ladder_rang
cardenvs eval --game rang --agents oracle:iterations=200,sees=hands rules_strong --deals 500 --workers "$W" --seed 0 --no-progress --out $S/oracle_hands_rang
cardenvs eval --game rang --agents pimc:iterations=200 rules_strong --deals 500 --workers "$W" --seed 0 --no-progress --out $S/pimc200_rang
# the docs keep each results.json's summary, not its per-episode records (tests/test_repo_weight.py)
python scripts/strip_records.py $S
