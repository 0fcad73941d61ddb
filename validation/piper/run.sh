#!/usr/bin/env bash
# All-to-all on the Frontier preset, after Piper's HALO evaluation.
#
#   validation/piper/run.sh [--check] [--no-run]
#
# Builds all-to-all scenarios on <topology preset="frontier"> (DCQCN unless stated,
# contiguous placement; generated into $WH_BUILD/validation-piper/) and writes
# validation/piper/report.md (also printed), each result beside what Piper reports
# (S. Dash and F. Wang, "Piper: Efficient Large-Scale MoE Training via Resource Modeling
# and Pipelined Hybrid Parallelism", ORNL, arXiv:2605.05049, 2026):
#
#   - micro-benchmark: a direct all-to-all of a fixed 64 MB buffer per GCD on 2, 4, 8,
#     16, 32 and 64 GCDs (1-8 nodes): per-GCD bandwidth, and its ratio across the node
#     boundary (8 -> 16 GCDs) beside the links' ratio (Infinity Fabric 50-200 GB/s at
#     the preset's FabricEfficiency 0.76, against 25 GB/s NICs shared by 2 GCDs) and the
#     paper's sharp drop at the node boundary;
#   - HALO against the flat direct and RCCL-like (window 8) all-to-alls on one group:
#     nodes (WH_PIPER_NODES) x per-GCD buffers (WH_PIPER_BUFFERS), plus 128 MB on the
#     node counts of WH_PIPER_LARGE, each with wh::Workload::MessageAlpha 0 and 10 us,
#     with DCQCN, and again with HPCC on the node counts of WH_PIPER_HPCC: time,
#     halo/flat, and for every cell the per-tier link load (links.csv) and the
#     message-overhead (alpha) breakdown.
#
# Without --check it reports only; a failing whsim run fails it (exit status 1).
#
# Options:
#   --check   also exit with status 1 if: a run drops a packet, delivers out of order,
#             stops early or leaves a message incomplete; a flat all-to-all does not
#             move exactly buffer/n bytes in one message per ordered pair; HALO does not
#             deliver each GCD exactly its column sum (bytes received minus bytes
#             forwarded), or a Phase III message starts before the Phase II data it
#             forwards has arrived; a HALO cell that disagrees with the paper (about
#             even, within 10%, on one switch; HALO ahead across switches with alpha > 0)
#             has no evidence row (per-tier link load and alpha breakdown); a repeated
#             run does not reproduce its flows.csv. Each failure is printed as
#             "run.sh: check failed: ...", else "run.sh: check passed"
#   --no-run  run no simulation: analyse the outputs an earlier run left in
#             $WH_BUILD/validation-piper
#
# Environment:
#   WH_BUILD          build directory, relative to the source tree (default: build)
#   WH_REPORT         where to write the report (default: validation/piper/report.md)
#   WH_PIPER_NODES    node counts of the HALO comparison (default: "4 16 32 64")
#   WH_PIPER_BUFFERS  per-GCD buffers in MB of the HALO comparison (default: "1 16")
#   WH_PIPER_LARGE    node counts that also run 128 MB per GCD (default: "4 16";
#                     empty: none; a direct all-to-all of 128 MB on 32 nodes takes
#                     about 100 s)
#   WH_PIPER_HPCC     node counts that also run every buffer of WH_PIPER_BUFFERS with
#                     HPCC (default: "4 16 32"; empty: none)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
harness_setup "${BASH_SOURCE[0]}" piper
nodes_list=${WH_PIPER_NODES:-4 16 32 64}
buffers=${WH_PIPER_BUFFERS:-1 16}
large=${WH_PIPER_LARGE-4 16}
hpcc=${WH_PIPER_HPCC-4 16 32}
cells=""
for nodes in $nodes_list; do
  for buf in $buffers; do cells="$cells $nodes:$buf:dcqcn"; done
  for l in $large; do [ "$l" = "$nodes" ] && cells="$cells $nodes:128:dcqcn"; done
done
for nodes in $hpcc; do
  for buf in $buffers; do cells="$cells $nodes:$buf:hpcc"; done
done
micro_gcds="2 4 8 16 32 64"

# a2a NAME GCDS ALGORITHM BUFFER ALPHA [CC]: writes $out/NAME.xml, an all-to-all of
# BUFFER per GCD over GCDs 0..GCDS-1 of one Frontier group (ALPHA empty: the preset's;
# CC default dcqcn)
a2a() {
  local alpha=""
  [ -n "$5" ] && alpha="  <set param=\"wh::Workload::MessageAlpha\" value=\"$5\"/>"
  cat >"$out/$1.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<scenario name="$1" seed="1" cc="${6:-dcqcn}">
  <topology preset="frontier" groups="1"/>
$alpha
  <workload>
    <collective id="a2a" kind="all-to-all" algorithm="$3" ranks="0-$(($2 - 1))" size="$4"/>
  </workload>
  <placement policy="contiguous"/>
</scenario>
XML
}

if [ "$norun" = 0 ]; then
  for n in $micro_gcds; do
    a2a "micro-$n" "$n" direct 64MB ""
    harness_run "micro-$n"
  done
  for cell in $cells; do
    IFS=: read -r nodes buf cc <<<"$cell"
    for alpha in 0 10; do
      for alg in halo direct rccl; do
        name="a2a-$alg-$nodes-${buf}MB-a$alpha-$cc"
        a2a "$name" $((nodes * 8)) "$alg" "${buf}MB" "${alpha}us" "$cc"
        harness_run "$name"
      done
    done
  done
  # determinism: the first HALO cell again
  # shellcheck disable=SC2086 # split the cell list into words
  set -- $cells
  IFS=: read -r nodes buf cc <<<"$1"
  harness_run "a2a-halo-$nodes-${buf}MB-a10-$cc" repeat
fi

python3 "$here/report.py" "$out" "$report" "$check" "$micro_gcds" "$cells"
