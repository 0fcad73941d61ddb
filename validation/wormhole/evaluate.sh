#!/usr/bin/env bash
# Wormhole IV evaluation: every row of the contended-network targets, each judged the
# way the network it runs on allows, into validation/wormhole/evaluation-report.md.
#
#   validation/wormhole/evaluate.sh [--check] [--quick] [--tuning] [--large] [--contended] [--reuse]
#                                   [BUILD_DIR]
#
# Quiet rows (the rail fabric's GPT-13B) are judged per flow against one exact run, as
# memo.sh does. Contended rows are judged against the exact engine's own perturbation
# ensemble (`whsim compare --ensemble 8`: the reference and 7 members with
# wh::Link::DelayJitter=1..7, run as child processes, -j the CPUs): a metric is inside
# when Wormhole deviates from the reference no more than the farthest member does
# (docs/user-guide.md, "Against the exact engine's own ensemble"). Every gated row
# starts with an empty pattern store (no --memo file), in memo mode at the settings
# below (SETTINGS; WH_SETTINGS adds --set options, for tuning).
#
# Scenario sets. The mechanisms' settings are chosen on the tuning set (--tuning,
# written to evaluation-tuning-report.md, no bounds) and reported on the report set
# (the default), which was written before any tuning and is the target table:
#   tuning: GPT-7B (64 GPUs) on the k=8 fat-tree with DCQCN and with HPCC (first 70 ms),
#           MoE-8x7B on one Frontier group with HPCC;
#   report: GPT-13B rail with DCQCN, HPCC and TIMELY (best of 3, per flow); MoE-8x7B rail
#           with DCQCN and HPCC (best of 3, ensemble of 8); GPT-13B on the k=8 fat-tree,
#           one whole iteration, DCQCN and HPCC (ensemble of 8); MoE-8x7B on one Frontier
#           group (adaptive routing) with TIMELY and with DCQCN (ensemble of 8).
# --quick keeps the first row of each kind (GPT-13B rail DCQCN, MoE-8x7B DCQCN, k=8
# DCQCN, Frontier TIMELY); --contended only the k=8 and Frontier rows, for a setting
# meant for contended fabrics (WH_SETTINGS="--set wh::Wormhole::FluidWindow=200us"
# WH_REPORT=validation/wormhole/evaluation-fluid-report.md gives that report). --large
# runs the 1024-GPU rows instead, into evaluation-large-report.md, against exact
# references made once and stored in $WH_REFERENCES (default BUILD_DIR/references;
# memo.sh --large shares them): GPT-175B with DCQCN, MoE-32x22B with DCQCN and with
# HPCC (each reference takes the exact engine about an hour; a missing one is unpacked
# from validation/wormhole/references/ when committed there, compressed, else made
# first).
#
# Each ensemble row keeps its exact run and its members in $WH_ENSEMBLES/NAME (default
# BUILD_DIR/ensembles; exact/ and ensemble/). --reuse judges the rows against those
# stored ensembles (`whsim compare --exact .../exact --ensemble-from .../ensemble`), so
# only Wormhole runs: for tuning, where each setting is judged against the same
# ensemble; a row's wall speedup then divides the stored exact wall, measured at
# another time. Without --reuse every row runs its exact engine and members afresh.
#
# Bounds (--check exits 1 when one is missed):
#   GPT-13B rail DCQCN / HPCC / TIMELY: iteration and mean FCT error <= 1%, wall speedup
#     >= 300x / 200x / 250x (best of 3);
#   MoE-8x7B rail DCQCN, HPCC: iteration error <= 1%; mean FCT error <= 1% where the
#     ensemble's per-flow spread is below 1%, else every judged metric inside; wall
#     speedup >= 100x (best of 3);
#   GPT-13B k=8, MoE-8x7B Frontier group: every judged metric inside (iteration time, op
#     end times, FCT quantiles), wall speedup >= 10x;
#   --large: GPT-175B iteration error <= 1%, its Wormhole run under 5 s; MoE-32x22B
#     iteration error <= 1%, wall speedup >= 20x and its Wormhole run under 60 s.
# Every row also checks that each flow's bytes are exact (summary.json's byte identity
# in the Wormhole run) and reports process_speedup beside wall_speedup.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
wormhole_setup "${BASH_SOURCE[0]}" "tuning large contended reuse" "$@"
presets="$root/scenarios/presets"
scen="$here/scenarios"
if [ "$large" = 1 ]; then
  report=${WH_REPORT:-$here/evaluation-large-report.md}
elif [ "$tuning" = 1 ]; then
  report=${WH_REPORT:-$here/evaluation-tuning-report.md}
else
  report=${WH_REPORT:-$here/evaluation-report.md}
fi
# the setting under evaluation (memo mode from an empty store), plus WH_SETTINGS
read -r -a extra <<< "${WH_SETTINGS:-}"
SETTINGS=(--set wh::Wormhole::Mode=memo "${extra[@]}")
ENSEMBLE=8
ensembles=${WH_ENSEMBLES:-$build/ensembles}

run() {
  local name=$1 file=$2
  shift 2
  echo "evaluate.sh: $name" >&2
  "$whsim" compare "$file" --out "$work/$name" --quiet --progress never "${SETTINGS[@]}" "$@"
}

# repeats NAME FILE ARGS...: after `run NAME` (or run_ens), two more Wormhole runs
# against NAME's exact run (or the stored one it was judged against), which must write
# the same flows.csv; NAME/best.json gets the fastest Wormhole walls of the three
repeats() {
  local name=$1 file=$2 i exact="$work/$1/exact"
  shift 2
  [ -d "$exact" ] || exact="$ensembles/$name/exact"
  for i in 2 3; do
    run "$name.$i" "$file" "$@" --exact "$exact"
    cmp -s "$work/$name/wormhole/flows.csv" "$work/$name.$i/wormhole/flows.csv" ||
      fail "$name: repeat $i wrote another wormhole/flows.csv"
  done
  python3 - "$work/$name" <<'PY'
import json, sys
d = sys.argv[1]
runs = [json.load(open(p + '/compare.json')) for p in (d, d + '.2', d + '.3')]
json.dump({'exact_wall_s': runs[0]['exact']['wall_s'],
           'wormhole_wall_s': min(r['wormhole']['wall_s'] for r in runs),
           'wormhole_process_s': min(r['wormhole']['process_s'] for r in runs)},
          open(d + '/best.json', 'w'))
PY
}

# run_best NAME FILE ARGS...: `run`, then its repeats (best of 3)
run_best() {
  run "$@"
  repeats "$@"
}

# row NAME TITLE GATE: a table row from $work/NAME; GATE (a Python expression over j
# (compare.json), e (its ensemble, or None), ws (wall speedup, best of 3 where run so),
# it (|iteration error|), spread (the ensemble's per-flow spread), allin (every
# judged metric inside), w (wormhole.json)) must hold, else the row fails
row() {
  python3 - "$work/$1" "$2" "$3" >> "$report" <<'PY' || fail "$1: $2 misses its bound"
import json, os, sys
d, title, gate = sys.argv[1:4]
j = json.load(open(d + '/compare.json'))
w = json.load(open(d + '/wormhole/wormhole.json'))
s = json.load(open(d + '/wormhole/summary.json'))
e = j.get('ensemble')
ew, ww, wp = j['exact']['wall_s'], j['wormhole']['wall_s'], j['wormhole']['process_s']
if os.path.exists(d + '/best.json'):
    b = json.load(open(d + '/best.json'))
    ew, ww, wp = b['exact_wall_s'], b['wormhole_wall_s'], b['wormhole_process_s']
ws = ew / ww
it_err = j.get('iteration_time_error')
if it_err is None:
    it_err = j.get('makespan_error')
it = abs(it_err) if it_err is not None else float('inf')
pct = lambda v: '-' if v is None else f'{v*100:+.2f}%'
spread, allin, ens = None, True, '-'
if e:
    spread = e['member_spread_mean']
    allin = e['judged'] > 0 and e['inside'] == e['judged']
    tm = e['metrics'].get('iteration_time') or e['metrics'].get('makespan')
    outside = [k for k, m in e['metrics'].items() if m.get('verdict') == 'outside']
    ens = (f"{e['inside']} / {e['judged']} inside; time: member max {tm['exact_ensemble_max']*100:.2f}%"
           f"; spread {spread*100:.1f}%{' (chaotic)' if e['chaotic'] else ''}"
           + (f"; outside: {', '.join(outside[:4])}{' ...' if len(outside) > 4 else ''}" if outside else ''))
sk = w.get('skip', {})
ok = eval(gate)
f = j['fct_error']
ep = j['exact'].get('process_s')
print(f"| {title} | {pct(it_err)} | {pct(f['mean'])} | {ens} | {ew:.1f} s | {ww:.2f} s | "
      f"{ws:.1f}x | {f'{ep / wp:.1f}x' if ep else '-'} | {j['event_speedup']:.1f}x | "
      f"{sk.get('fast_forwards', 0)} | {'met' if ok else 'MISSED'} |")
sys.exit(0 if ok else 1)
PY
}

# run_ens NAME FILE ARGS...: `run` judged against the ensemble of 8: with --reuse the one
# stored in $ensembles/NAME (only Wormhole runs), else a fresh one, then stored there
run_ens() {
  local name=$1 file=$2 keep="$ensembles/$1"
  shift 2
  if [ "$reuse" = 1 ] && [ -f "$keep/exact/summary.json" ]; then
    run "$name" "$file" "$@" --ensemble "$ENSEMBLE" --exact "$keep/exact" \
      --ensemble-from "$keep/ensemble"
    return
  fi
  run "$name" "$file" "$@" --ensemble "$ENSEMBLE"
  rm -rf "$keep"
  mkdir -p "$keep"
  cp -r "$work/$name/exact" "$work/$name/ensemble" "$keep/"
}

header="| row | iteration error | mean FCT error | ensemble of $ENSEMBLE | exact wall | Wormhole wall | wall speedup | process speedup | event speedup | fast-forwards | bound |"
rule="|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"
{
  echo "# Wormhole IV: contended networks, judged against the exact engine's ensemble"
  echo
  echo "Generated by \`validation/wormhole/evaluate.sh$([ "$tuning" = 1 ] && echo ' --tuning')$([ "$large" = 1 ] && echo ' --large')$([ "$quick" = 1 ] && echo ' --quick')\` on $(date -u +%Y-%m-%d) with $(nproc) cores."
  echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (walls on a loaded machine carry its noise;"
  echo "event speedups do not)."
  echo "Setting: \`${SETTINGS[*]}\`. Each row is one \`whsim compare\` (best of 3 where stated),"
  echo "the exact engine and Wormhole timed alone in one process; ensemble members run before"
  echo "them as child processes. \`ensemble\`: judged metrics inside, the farthest member's"
  echo "iteration-time deviation, the members' mean per-flow FCT spread, metrics outside."
  echo
  echo "$header"
  echo "$rule"
} > "$report"

quiet="it <= 0.01 and j['fct_error']['mean'] <= 0.01"
moe="it <= 0.01 and (j['fct_error']['mean'] <= 0.01 if spread < 0.01 else allin) and ws >= 100"
gate_contended="allin and ws >= 10"
if [ "$tuning" = 1 ]; then
  for cc in dcqcn hpcc; do
    run_ens "gpt7-k8-$cc" "$scen/gpt-7b-k8-$cc.xml"
    row "gpt7-k8-$cc" "GPT-7B k=8 fat-tree, ${cc^^}, first 70 ms" "True"
  done
  run_ens moe-frontier-hpcc "$scen/moe-8x7b-frontier-hpcc.xml"
  row moe-frontier-hpcc "MoE-8x7B, one Frontier group, HPCC" "True"
elif [ "$large" = 0 ]; then
  if [ "$contended" = 0 ]; then
    run_best gpt13-dcqcn "$presets/gpt-13b-dcqcn.xml"
    row gpt13-dcqcn "GPT-13B rail, DCQCN (best of 3)" "$quiet and ws >= 300"
  fi
  if [ "$quick" = 0 ] && [ "$contended" = 0 ]; then
    run_best gpt13-hpcc "$presets/gpt-13b-hpcc.xml"
    row gpt13-hpcc "GPT-13B rail, HPCC (best of 3)" "$quiet and ws >= 200"
    run_best gpt13-timely "$presets/gpt-13b-dcqcn.xml" --cc timely
    row gpt13-timely "GPT-13B rail, TIMELY (best of 3)" "$quiet and ws >= 250"
  fi
  for cc in dcqcn hpcc; do
    [ "$contended" = 1 ] && continue
    [ "$quick" = 1 ] && [ "$cc" = hpcc ] && continue
    run_ens "moe-$cc" "$presets/moe-8x7b-$cc.xml"
    repeats "moe-$cc" "$presets/moe-8x7b-$cc.xml"
    row "moe-$cc" "MoE-8x7B rail, ${cc^^} (best of 3)" "$moe"
  done
  for cc in dcqcn hpcc; do
    [ "$quick" = 1 ] && [ "$cc" = hpcc ] && continue
    run_ens "k8-$cc" "$scen/gpt-13b-k8-full-$cc.xml"
    row "k8-$cc" "GPT-13B k=8 fat-tree, ${cc^^}" "$gate_contended"
  done
  for cc in timely dcqcn; do
    [ "$quick" = 1 ] && [ "$cc" = dcqcn ] && continue
    run_ens "frontier-$cc" "$scen/moe-8x7b-frontier-$cc.xml"
    row "frontier-$cc" "MoE-8x7B, one Frontier group, ${cc^^}" "$gate_contended"
  done
else
  refs=${WH_REFERENCES:-$build/references}
  mkdir -p "$refs"
  for ref in gpt-175b-dcqcn moe-32x22b-dcqcn moe-32x22b-hpcc; do
    if [ ! -f "$refs/$ref/summary.json" ] && [ -f "$here/references/$ref/summary.json" ]; then
      echo "evaluate.sh: unpacking the committed exact reference $ref into $refs/$ref" >&2
      python3 - "$here/references/$ref" "$refs/$ref" <<'PY'
import lzma, os, shutil, sys
src, dst = sys.argv[1:3]
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src)):
    if name.endswith('.xz'):
        with lzma.open(os.path.join(src, name)) as f, open(os.path.join(dst, name[:-3]), 'wb') as o:
            shutil.copyfileobj(f, o)
    else:
        shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
PY
    fi
    if [ ! -f "$refs/$ref/summary.json" ]; then
      echo "evaluate.sh: making the exact reference $refs/$ref (an hour or more)" >&2
      "$whsim" run "$presets/$ref.xml" --out "$refs/$ref" --quiet --progress never
    fi
  done
  run gpt175 "$presets/gpt-175b-dcqcn.xml" --exact "$refs/gpt-175b-dcqcn"
  row gpt175 "GPT-175B rail, 1024 GPUs, DCQCN" "it <= 0.01 and ww < 5"
  for cc in dcqcn hpcc; do
    run "moe32-$cc" "$presets/moe-32x22b-$cc.xml" --exact "$refs/moe-32x22b-$cc"
    row "moe32-$cc" "MoE-32x22B rail, 1024 GPUs, ${cc^^}" "it <= 0.01 and ws >= 20 and ww < 60"
  done
fi

# every flow's bytes exact: the Wormhole run's summary.json byte identity (at a
# consistent end: every flow completed; a run stopped at its stop time is not one)
for d in "$work"/*/wormhole; do
  python3 - "$d/summary.json" <<'PY' || fail "$d: byte identity broken"
import json, sys
s = json.load(open(sys.argv[1]))
ok = s['data_bytes_sent'] == s['data_bytes_delivered'] + s['data_bytes_dropped'] + \
    s['data_bytes_reclaimed'] and s['flows_completed'] == s['flows']
sys.exit(0 if ok or s.get('stopped_early') else 1)
PY
done

wormhole_finish evaluate.sh
