#!/usr/bin/env bash
# The sweep benchmark of `make bench`: scenarios/sweeps/bench-8-seeds.xml (eight equal
# cells) with `whsim sweep -j 1`, then `-j 2`, each into a new folder, and the ratio of
# their wall times (the target on a 2-core machine: at most 0.6), with the machine's
# load average before and after (other work on the cores makes the ratio meaningless:
# the report says so). Writes BUILD_DIR/bench-sweep.json. It reports only: a slow
# ratio never fails the script, a failing sweep does.
#
#   tools/bench-sweep.sh BUILD_DIR
set -euo pipefail

build=${1:-build}
root=${WH_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
whsim="$build/whsim"
spec="$root/scenarios/sweeps/bench-8-seeds.xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

wall() { # jobs -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$whsim" sweep "$spec" --out "$tmp/j$1" -j "$1" >/dev/null
  t1=$(date +%s.%N)
  python3 -c "print('%.3f' % ($t1 - $t0))"
}

load0=$(cut -d' ' -f1 /proc/loadavg)
j1=$(wall 1)
j2=$(wall 2)
load1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$build/bench-sweep.json" "$j1" "$j2" "$(nproc)" "$load0" "$load1" <<'PY'
import json, sys
out, j1, j2, cpus = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
load = [float(sys.argv[5]), float(sys.argv[6])]
r = {"case": "sweep bench-8-seeds", "cells": 8, "cpus": cpus, "wall_j1_s": j1, "wall_j2_s": j2,
     "ratio_j2_over_j1": round(j2 / j1, 3), "target": "<= 0.6 on 2 cores",
     "load_average_before_after": load}
json.dump(r, open(out, "w"), indent=2)
print("sweep of 8 equal cells: -j 1 %.2f s, -j 2 %.2f s, ratio %.2f (target <= 0.6 on 2 cores, "
      "%d CPUs here, load average %.1f before, %.1f after%s); wrote %s"
      % (j1, j2, j2 / j1, cpus, load[0], load[1],
         ": other work shares the cores, the ratio is not the sweep's" if max(load) > 1.5 else "",
         out))
PY
