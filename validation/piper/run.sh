#!/usr/bin/env bash
# All-to-all on the Frontier preset, after Piper's HALO evaluation.
#
#   validation/piper/run.sh [--check] [--no-run]
#
# Builds all-to-all scenarios on <topology preset="frontier"> (DCQCN unless stated,
# contiguous placement, the calendar-queue scheduler; generated into
# $WH_BUILD/validation-piper/) and writes
# validation/piper/report.md (also printed), each result beside what Piper reports
# (S. Dash and F. Wang, "Piper: Efficient Large-Scale MoE Training via Resource Modeling
# and Pipelined Hybrid Parallelism", ORNL, arXiv:2605.05049, 2026):
#
#   - micro-benchmark: a direct all-to-all of a fixed 64 MB buffer per GCD on 2, 4, 8,
#     16, 32 and 64 GCDs (1-8 nodes): per-GCD bandwidth, and its ratio across the node
#     boundary (8 -> 16 GCDs) beside the links' ratio (Infinity Fabric 50-200 GB/s at
#     the preset's FabricEfficiency 0.76, against 25 GB/s NICs shared by 2 GCDs) and the
#     paper's sharp drop at the node boundary;
#   - HALO against the flat direct and RCCL-like (batches of 13) all-to-alls on the
#     preset, over a grid of cells: nodes 4, 16, 32, 64, 128 (one group), 256 (two
#     groups of a 4-group machine), 512 (four) x per-GCD buffers 1, 16, 128 MB x DCQCN, HPCC; each cell is 9
#     runs, the three algorithms with wh::Workload::MessageAlpha (paid by each rank one
#     message after another) at 0, at the measured 0.76 us (the fit on osu_alltoall
#     across Slingshot-11, validation/frontier/report.md, "Small all-to-all"; defined
#     once below) and at 10 us, 0 and 10 us the bracket around it: time, halo/flat, the
#     paper-agreement verdict at the measured alpha with the bracket beside it, and for
#     every cell the per-tier link load (links.csv) and the message-overhead (alpha)
#     breakdown; cells stored by an engine before the measured alpha, with the 6 runs of
#     0 and 10 us only, are rendered as such (marked, without a measured-alpha verdict);
#     the cells with no stored result or without the measured alpha's runs are listed
#     with an estimate of their wall time (a model of events and event rate fitted on
#     the stored runs);
#   - plots (gnuplot, when on the PATH): halo/flat time against nodes per buffer and
#     alpha, and the micro-benchmark's per-GCD bandwidth against GCDs, as SVG files
#     beside the report.
#
# Results are kept between invocations in validation/piper/results.csv (one row per
# run: times, per-tier link loads, the alpha breakdown, the check verdicts, the engine's
# last commit, the invocation's start, wall and peak memory; rewritten in a fixed order,
# byte for byte the same for the same runs apart from the run, wall_s and rss_kb
# fields): once a cell's 9 runs (or the micro-benchmark's) have passed every check of
# --check below, they replace that cell's rows there, so a cell whose checks fail is
# not stored. The report is rendered from results.csv and engines.csv alone, so cells
# add up over several invocations; it names the invocation and the engine of each cell.
#
# Engine equivalence: each invocation that runs anything also reruns the fingerprint
# cells 16:16:dcqcn and 16:16:hpcc (16 nodes on 4 switches, each 3 algorithms at the
# alphas it is stored at: all three, or 0 and 10 us for a cell of an engine before the
# measured alpha; about 40-60 s in all; those of them stored with at least the 6 runs
# of 0 and 10 us, and not a cell the invocation runs anyway) and compares every
# simulated field of each rerun (time_ps, flows, events, msgs, path, the phase times,
# every per-tier bytes and busy field, the global fields and the clean, conservation and
# order verdicts, as results.csv writes them; not run, wall_s, rss_kb, engine or repeat)
# with its stored row. The stored rows
# stay as they are (with their engine); per engine E of those rows and per congestion
# control, one record goes to validation/piper/engines.csv (engine, reproduces = E,
# verdict, that CC's fingerprint cells, runs compared, the invocation's start; rewritten
# in a fixed order, a later record of the same two engines and CC replacing the
# earlier): "equal" when every field of every run is equal, else "differs: " and the
# first differing field (cell, algorithm, alpha, field, stored and new values), which
# is also printed. The report counts a stored cell as current when its engine is the
# rendering's or a chain of "equal" records of the cell's CC links the two (the latest
# record of a pair decides) and says which records; otherwise it marks the cell "older
# engine". So a change to one CC's code leaves the other CC's cells current. The
# engine is the last commit of the engine's sources
# (engine_src below, "+modified" with uncommitted changes there).
#
# Without --check it reports only; a failing whsim run fails it (exit status 1; the
# cells finished before it stay stored).
#
# Options:
#   --check   also exit with status 1 if: a run drops a packet, delivers out of order,
#             times out a retransmission (PFC makes the fabric lossless), stops early
#             or leaves a message incomplete; a flat all-to-all does not move exactly
#             buffer/n bytes in one message per ordered pair; HALO does not
#             deliver each GCD exactly its column sum (bytes received minus bytes
#             forwarded), or a Phase III message starts before the Phase II data it
#             forwards has arrived; a HALO cell that disagrees with the paper (about
#             even, within 10%, on one switch; HALO ahead across switches with alpha > 0;
#             judged at every alpha, the report's verdict at the measured one) has no
#             evidence row (per-tier link load and alpha breakdown); a repeated run does
#             not reproduce its flows.csv; a stored row records a failed check; a stored
#             cell lacks one of its runs at 0 or 10 us; or validation/frontier/report.md's
#             fitted alpha ("Fit: alpha = ... us on 16 GCDs of two nodes") is not the
#             measured alpha defined below (or that report has no such line). A cell
#             stored with 0 and 10 us only is no failure. Each failure is printed as
#             "run.sh: check failed: ...", else "run.sh: check passed". A fingerprint
#             rerun that differs from its stored rows is reported (the report's "Engine
#             equivalence") but is not by itself a check failure: the cells of the
#             stored engine stay marked older engine, and a rerun of a cell, checked as
#             above, replaces them
#   --no-run  run no simulation: render the report from results.csv and engines.csv
#             alone
#
# Environment:
#   WH_BUILD          build directory, relative to the source tree (default: build);
#                     the runs' outputs go to $WH_BUILD/validation-piper
#   WH_REPORT         where to write the report (default: validation/piper/report.md)
#   WH_RESULTS        the results file (default: validation/piper/results.csv)
#   WH_ENGINES        the engine-equivalence records (default: engines.csv beside the
#                     results file)
#   WH_PIPER_CELLS    the cells to run, as NODES:BUFFER_MB:CC (e.g. "64:128:dcqcn
#                     256:1:hpcc"; nodes 4 16 32 64 128 256 512, buffer 1 16 128, cc
#                     dcqcn or hpcc), run in that order (9 runs each), each replacing
#                     its stored rows; empty: none (the micro-benchmark and the
#                     fingerprint only); unset: the grid cells with no stored result,
#                     or stored without the measured alpha's runs, whose runs
#                     each keep under 30 minutes and whose memory fits (wall from a
#                     model fitted on the stored runs: events from flows and packets,
#                     over an event rate that falls with flows, see the report's "Cells
#                     not run"; memory from the stored direct runs; a cell of 4 nodes
#                     while too few runs are stored to fit), cheapest first, as many
#                     as fit WH_PIPER_BUDGET
#   WH_PIPER_BUDGET   seconds of estimated wall for the cells chosen without
#                     WH_PIPER_CELLS (default: 3600)
#
# Each invocation that runs anything also reruns the micro-benchmark (about 15 s), the
# fingerprint cells (about 40 s) and, for determinism, the HALO alpha-10 run of its
# first cell.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
results=${WH_RESULTS:-$here/results.csv}
engines=${WH_ENGINES:-$(dirname "$results")/engines.csv}
budget=${WH_PIPER_BUDGET:-3600}
# The measured per-message cost, wh::Workload::MessageAlpha in us: the fit on
# osu_alltoall (GPU-aware MPI, 8 bytes per pair) on 16 GCDs of two nodes across
# Slingshot-11, validation/frontier/report.md ("Small all-to-all"; validation/frontier
# keeps the fit in that report's text, in no data file): report.py reads the fit there
# and --check fails if it is not this value. Each cell runs at 0, this and 10 us
# (report.py alphas).
export PIPER_MEASURED_ALPHA_US=0.76
alphas=$(python3 "$here/report.py" alphas)
case $budget in
'' | *[!0-9]*)
  echo "$prog: WH_PIPER_BUDGET must be a whole number of seconds, not '$budget'" >&2
  exit 2
  ;;
esac
if [ "${WH_PIPER_CELLS+set}" = set ]; then
  cells=$WH_PIPER_CELLS
  for cell in $cells; do
    rest=${cell#*:}
    case ${cell%%:*} in
    4 | 16 | 32 | 64 | 128 | 256 | 512) ;;
    *) rest=bad ;;
    esac
    case $rest in
    1:dcqcn | 1:hpcc | 16:dcqcn | 16:hpcc | 128:dcqcn | 128:hpcc) ;;
    *)
      echo "$prog: WH_PIPER_CELLS: '$cell' is not NODES:BUFFER_MB:CC with nodes 4 16 32 64 128 256 512, buffer 1 16 128, cc dcqcn or hpcc" >&2
      exit 2
      ;;
    esac
  done
elif [ "$norun" = 0 ]; then
  cells=$(python3 "$here/report.py" plan "$results" "$budget")
fi
harness_setup "${BASH_SOURCE[0]}" piper
# the engine: the last commit of its sources (+modified with uncommitted changes there)
engine_src="modules bindings-c tools/whsim meson.build meson_options.txt"
# shellcheck disable=SC2086 # the list of paths
engine=$(git log -1 --abbrev=10 --format=%h -- $engine_src 2>/dev/null || true)
# shellcheck disable=SC2086
if [ -z "$engine" ]; then
  engine=unknown
elif [ -n "$(git status --porcelain -- $engine_src 2>/dev/null)" ]; then
  engine="$engine+modified"
fi
micro_gcds="2 4 8 16 32 64"

# each run through /usr/bin/time when there is one: its peak resident memory (KB) in
# $out/NAME.rss, for the report's bytes per flow
if [ "$norun" = 0 ] && [ -x /usr/bin/time ]; then
  real_whsim=$(cd "$(dirname "$whsim")" && pwd)/$(basename "$whsim")
  whsim="$out/whsim-rss"
  # arguments: run SCENARIO --out DIR --quiet (harness_run)
  # shellcheck disable=SC2016 # $4 and $@ are the wrapper's own
  printf '#!/bin/sh\nexec /usr/bin/time -f %%M -o "$4.rss" "%s" "$@"\n' "$real_whsim" >"$whsim"
  chmod +x "$whsim"
fi

# a2a NAME GCDS ALGORITHM BUFFER ALPHA [CC]: writes $out/NAME.xml, an all-to-all of
# BUFFER per GCD over GCDs 0..GCDS-1 of a Frontier preset of as many groups of 128
# nodes as they need, and at least 4 for 256 nodes or more (the rule of whsim plan
# --emit-scenario, docs/modules/piper.md: groups beyond the job's for adaptive routing's
# detours) (ALPHA empty: the preset's; CC default dcqcn). The calendar queue
# pops exactly the heap's order (the scenario suite checks it on every shipped
# scenario; the fingerprint cells compare every field with rows the heap made) and,
# with millions of pending timers, needs about 30% less time.
groups_for() {
  local g=$((($1 + 1023) / 1024))
  if [ "$1" -ge 2048 ] && [ "$g" -lt 4 ]; then g=4; fi
  echo "$g"
}

a2a() {
  local alpha=""
  [ -n "$5" ] && alpha="  <set param=\"wh::Workload::MessageAlpha\" value=\"$5\"/>"
  cat >"$out/$1.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<scenario name="$1" seed="1" cc="${6:-dcqcn}" scheduler="calendar">
  <topology preset="frontier" groups="$(groups_for "$2")"/>
$alpha
  <workload>
    <collective id="a2a" kind="all-to-all" algorithm="$3" ranks="0-$(($2 - 1))" size="$4"/>
  </workload>
  <placement policy="contiguous"/>
</scenario>
XML
}

# run_cell NODES:BUFFER_MB:CC [ALPHAS]: the cell's runs, the three algorithms at each of
# ALPHAS (us; default all the alphas, 0, the measured one and 10) (sets nodes, buf and cc)
run_cell() {
  IFS=: read -r nodes buf cc <<<"$1"
  for alpha in ${2:-$alphas}; do
    for alg in halo direct rccl; do
      name="a2a-$alg-$nodes-${buf}MB-a$alpha-$cc"
      a2a "$name" $((nodes * 8)) "$alg" "${buf}MB" "${alpha}us" "$cc"
      harness_run "$name"
    done
  done
}

run_stamp=$(date -u +%Y-%m-%dT%H:%MZ)
if [ "$norun" = 0 ]; then
  for n in $micro_gcds; do
    a2a "micro-$n" "$n" direct 64MB ""
    harness_run "micro-$n"
  done
  python3 "$here/report.py" store "$out" "$results" micro "$engine" "$run_stamp"
  # the fingerprint: the stored fingerprint cells this invocation does not run anyway
  fingerprint=""
  for cell in $(python3 "$here/report.py" fingerprint-cells "$results"); do
    case " $cells " in
    *" $cell "*) ;;
    *) fingerprint="$fingerprint $cell" ;;
    esac
  done
  for cell in $fingerprint; do
    # the alphas it is stored at: a cell of an engine before the measured alpha has 0 and 10
    run_cell "$cell" "$(python3 "$here/report.py" alphas "$results" "$cell")"
  done
  if [ -n "$fingerprint" ]; then
    # shellcheck disable=SC2086 # the list of cells
    python3 "$here/report.py" fingerprint "$out" "$results" "$engines" "$engine" "$run_stamp" $fingerprint
  fi
  repeat=repeat # the first cell's HALO alpha-10 run again, for determinism
  for cell in $cells; do
    run_cell "$cell"
    if [ -n "$repeat" ]; then
      harness_run "a2a-halo-$nodes-${buf}MB-a10-$cc" "$repeat"
    fi
    # shellcheck disable=SC2086 # no argument when empty
    python3 "$here/report.py" store "$out" "$results" "$cell" "$engine" "$run_stamp" $repeat
    repeat=""
  done
fi

mkdir -p "$out"
python3 "$here/report.py" render "$results" "$engines" "$report" "$check" "$engine" "$out" $((1 - norun))
