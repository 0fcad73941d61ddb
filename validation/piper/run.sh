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
#   - HALO against the flat direct and RCCL-like (window 8) all-to-alls on the
#     preset: nodes (WH_PIPER_NODES; one group up to 128 nodes, 256 on two groups, 512
#     on four) x per-GCD buffers (WH_PIPER_BUFFERS, less the cells of WH_PIPER_SKIP),
#     plus 128 MB on the node counts of WH_PIPER_LARGE, each with
#     wh::Workload::MessageAlpha 0 and 10 us (paid by each rank one message after
#     another), with DCQCN, and again with HPCC on the node counts of WH_PIPER_HPCC:
#     time, halo/flat, and for every cell the per-tier link load (links.csv) and the
#     message-overhead (alpha) breakdown; the cells of the full grid (nodes x 1, 16,
#     128 MB x DCQCN, HPCC) left out are listed with an estimate of their wall time;
#   - plots (gnuplot, when on the PATH): halo/flat time against nodes per buffer and
#     alpha, and the micro-benchmark's per-GCD bandwidth against GCDs, as SVG files
#     beside the report.
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
#   WH_PIPER_NODES    node counts of the HALO comparison (default: "4 16 32 64 128
#                     256")
#   WH_PIPER_BUFFERS  per-GCD buffers in MB of the HALO comparison (default: "1 16")
#   WH_PIPER_SKIP     NODES:BUFFER cells of the two lists above not run (default:
#                     "128:16 256:16": the script's total time, see the report)
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
nodes_list=${WH_PIPER_NODES:-4 16 32 64 128 256}
buffers=${WH_PIPER_BUFFERS:-1 16}
skip=${WH_PIPER_SKIP-128:16 256:16}
large=${WH_PIPER_LARGE-4 16}
hpcc=${WH_PIPER_HPCC-4 16 32}
cells=""
# add_cell NODES BUFFER CC: unless NODES:BUFFER is in WH_PIPER_SKIP
add_cell() {
  case " $skip " in *" $1:$2 "*) return ;; esac
  cells="$cells $1:$2:$3"
}
for nodes in $nodes_list; do
  for buf in $buffers; do add_cell "$nodes" "$buf" dcqcn; done
  for l in $large; do [ "$l" = "$nodes" ] && add_cell "$nodes" 128 dcqcn; done
done
for nodes in $hpcc; do
  for buf in $buffers; do add_cell "$nodes" "$buf" hpcc; done
done
micro_gcds="2 4 8 16 32 64"

# each run through /usr/bin/time when there is one: its peak resident memory (KB) in
# $out/NAME.rss, for the report's bytes per flow
if [ "$norun" = 0 ] && [ -x /usr/bin/time ]; then
  real_whsim=$(cd "$(dirname "$whsim")" && pwd)/$(basename "$whsim")
  whsim="$out/whsim-rss"
  # arguments: run SCENARIO --out DIR --quiet (harness_run)
  printf '#!/bin/sh\nexec /usr/bin/time -f %%M -o "$4.rss" "%s" "$@"\n' "$real_whsim" >"$whsim"
  chmod +x "$whsim"
fi

# a2a NAME GCDS ALGORITHM BUFFER ALPHA [CC]: writes $out/NAME.xml, an all-to-all of
# BUFFER per GCD over GCDs 0..GCDS-1 of a Frontier preset of as many groups of 128
# nodes as they need (ALPHA empty: the preset's; CC default dcqcn)
a2a() {
  local alpha=""
  [ -n "$5" ] && alpha="  <set param=\"wh::Workload::MessageAlpha\" value=\"$5\"/>"
  cat >"$out/$1.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<scenario name="$1" seed="1" cc="${6:-dcqcn}">
  <topology preset="frontier" groups="$((($2 + 1023) / 1024))"/>
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

python3 "$here/report.py" "$out" "$report" "$check" "$micro_gcds" "$cells" "$nodes_list"
