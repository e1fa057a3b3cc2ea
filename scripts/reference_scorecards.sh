#!/usr/bin/env bash
# The scorecards published in docs/benchmark.md: the reference agents and the Node.js example bot on each
# game's protocol (LEVEL=quick by default; LEVEL=full for the full protocol), outputs in docs/benchmark/.
# The reference ladder itself: cardenvs benchmark --game G --build-ladder [--quick] --out train/protocols
set -euo pipefail
W="${WORKERS:-2}"
LEVEL="${LEVEL:-quick}"
FLAG=$([ "$LEVEL" = quick ] && echo --quick || true)
for game in ring_rang rang; do
  for agent in random rules_strong trained exec:path=examples/bots/random_bot.js; do
    name=$(echo "$agent" | sed 's/exec:path=examples\/bots\/random_bot.js/node_random_bot/')
    cardenvs benchmark --game "$game" --agent "$agent" $FLAG --workers "$W" --no-progress \
      --out "docs/benchmark/${game}_${name}_${LEVEL}"
  done
done
