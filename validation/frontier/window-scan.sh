#!/usr/bin/env bash
# The Frontier collective model's one fitted value, the batch of RCCL's point-to-point
# rounds (wh::Workload::RcclWindow with RcclSchedule=batch): all-to-alls of 2 MiB per
# pair on 16, 32, 64 and 128 GCDs (packed on consecutive nodes) for each window and
# seed, their goodput per GCD ((n - 1) x 2 MiB over the time) appended to
# validation/frontier/window-scan.csv, which validation/frontier/run.sh reports beside
# the measured goodput. Each cell takes seconds to a minute.
#
#   validation/frontier/window-scan.sh [--help]
#
# It has no --check: its cells are the evidence of the fit, which run.sh --check bounds.
#
# Environment:
#   WH_BUILD         build directory (default: build)
#   WH_SCAN_WINDOWS  windows (default: "11 12 13")
#   WH_SCAN_SEEDS    scenario seeds (default: "1 2 3")
#   WH_SCAN_SIZES    GCDs (default: "16 32 64 128")
#   WH_SCAN_ALPHAS   wh::Workload::MessageAlpha values (default: the preset's, 200ns)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
cd "$here/../.."
build=${WH_BUILD:-build}
out="$build/validation-frontier-scan"
csv="$here/window-scan.csv"
mkdir -p "$out"
[ -s "$csv" ] || echo "window,message_alpha,gcds,seed,goodput_gbps" >"$csv"
for a in ${WH_SCAN_ALPHAS:-200ns}; do
for w in ${WH_SCAN_WINDOWS:-11 12 13}; do
  for n in ${WH_SCAN_SIZES:-16 32 64 128}; do
    for seed in ${WH_SCAN_SEEDS:-1 2 3}; do
      name="scan-$w-$a-$n-$seed"
      cat >"$out/$name.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<scenario name="$name" seed="$seed" cc="dcqcn">
  <topology preset="frontier" groups="1"/>
  <set param="wh::Workload::RcclWindow" value="$w"/>
  <set param="wh::Workload::MessageAlpha" value="$a"/>
  <workload>
    <collective id="a2a" kind="all-to-all" ranks="0-$((n - 1))" size="$((n * 2))MiB"/>
  </workload>
  <placement policy="contiguous"/>
</scenario>
XML
      "$build/whsim" run "$out/$name.xml" --out "$out/$name" >"$out/$name.log" 2>&1
      python3 - "$out/$name/summary.json" "$w" "$a" "$n" "$seed" >>"$csv" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["iteration_time_ps"] * 1e-12
n = int(sys.argv[4])
print("%s,%s,%d,%s,%.1f" % (sys.argv[2], sys.argv[3], n, sys.argv[5],
                           (n - 1) * 2 * 1048576 * 8 / t / 1e9))
PY
    done
  done
done
done
