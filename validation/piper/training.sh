#!/usr/bin/env bash
# MoE training on the Frontier preset, after Piper's evaluation: routing skew and expert
# migration, weak scaling, and Piper's meshes against an EP-only flat baseline.
#
#   validation/piper/training.sh [--check] [--no-run]
#
# Scenarios come from `whsim plan --emit-scenario` (the Piper compute model's op times,
# the builder's all-to-alls, stage sends and all-reduces on <topology preset="frontier">,
# DCQCN), edited where stated, generated into $WH_BUILD/validation-piper-training/; the
# report goes to validation/piper/training-report.md (also printed), each result beside
# what Piper reports (S. Dash and F. Wang, "Piper: Efficient Large-Scale MoE Training via
# Resource Modeling and Pipelined Hybrid Parallelism", ORNL, arXiv:2605.05049, 2026):
#
#   - skew and migration: the skew-2b model (training-models.ini) on 16 GCDs, PP 2 x EP 8,
#     8 micro-batches of 4096 tokens, 6 iterations, Zipf s = 1.0 with drift 0.01, with
#     and without migration (threshold 1.25, every 2 iterations, at most 8 swaps), and
#     uniform routing as the control: max/mean per-GCD token load before and after each
#     check, migration time (simulated flows) as a share of iteration time;
#   - weak scaling: piper-110b on 64 GCDs whole (PP 8 x EP 8, 8 micro-batches), and for
#     piper-862b (PP 16 x EP 32, 512 GCDs) and piper-1.7t (PP 32 x EP 32, 1024 GCDs) a
#     two-stage slice (two EP groups of 32 GCDs, one switch each, with the stage boundary
#     between them, 4 micro-batches); each composed to 32 micro-batches with the
#     planner's step formula (M + PP - 1) x t_mb + t_allreduce, t_mb and t_allreduce
#     measured on the engine: TFLOPS/GCD and 64 -> 1024 efficiency beside 45.15 / 39.38 /
#     33.04 and 73%;
#   - framework comparison: Small, Medium, Large and Super (shapes assumed in
#     training-models.ini) with Piper's mesh (the planner's best) on 8, 32, 80 and 512
#     GCDs against "EP-only flat" (PP 1, EP the largest divisor of E and N, DP = N,
#     direct all-to-all across nodes) on the same counts and on 256; Small on 8 GCDs is
#     simulated whole for both, the flat baseline elsewhere as one-layer slices of one
#     micro-batch composed to L layers and 4 micro-batches, except Large on 256 and Super
#     (the planner alone: their slices would take about twice Medium's 256-GCD slice,
#     near or over 30 minutes); the other Piper
#     meshes are the planner's; ratios beside 2.06 / 2.39 / 1.95 / 3.62x.
#
# Every run's wall time is listed in the report. Without --check it reports only; a
# failing whsim run fails it (exit status 1).
#
# Options:
#   --check   also exit with status 1 if: a run drops a packet, delivers out of order,
#             times out a retransmission (PFC makes the fabric lossless), stops early
#             or leaves a message incomplete; a migration check raises max/mean load or
#             moves other bytes than its swaps' expert state; a result
#             more than 15% from the paper's has no explanation in the report. (Not
#             agreeing with the paper is reported, not failed.) Each failure is printed
#             as "training.sh: check failed: ...", else "training.sh: check passed"
#   --no-run  run no simulation: analyse the outputs an earlier run left in
#             $WH_BUILD/validation-piper-training
#
# Environment:
#   WH_BUILD   build directory, relative to the source tree (default: build)
#   WH_REPORT  where to write the report (default: validation/piper/training-report.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
harness_setup "${BASH_SOURCE[0]}" piper-training
report=${WH_REPORT:-$here/training-report.md}
catalogue=modules/piper/data/models.ini
assumed=$here/training-models.ini

# model_ini NAME [LAYERS]: writes $out/NAME-LAYERS.ini (NAME.ini without LAYERS), the
# group NAME of the catalogue or of training-models.ini, with Layers=LAYERS if given;
# prints its path
model_ini() {
  local file=$out/$1${2:+-$2}.ini src=$catalogue
  grep -q "^\[$1\]" "$src" || src=$assumed
  awk -v g="[$1]" -v l="${2:-}" '
    $0 == g { on = 1; print; next }
    /^\[/ { on = 0 }
    on { if (l != "" && /^Layers=/) print "Layers=" l; else print }' "$src" >"$file"
  echo "$file"
}

# emit NAME MODEL_FILE GCDS MESH MICRO_BATCHES [PLAN_OPTION]...: whsim plan --emit-scenario
# $out/NAME.xml of that mesh (the planner's table in $out/NAME.plan)
emit() {
  local name=$1 model=$2 gcds=$3 mesh=$4 m=$5
  shift 5
  "$whsim" plan --model "$model" --gcds "$gcds" --mesh "$mesh" --micro-batches "$m" \
    "$@" --emit-scenario "$out/$name.xml" >"$out/$name.plan"
}

# edit NAME ITERATIONS [PARAM=VALUE]...: sets the workload's iterations and adds a
# <set param="wh::ModelPreset::PARAM"> for each PARAM=VALUE (replacing the emitted one)
edit() {
  local file=$out/$1.xml iterations=$2 kv
  shift 2
  sed -i "s|<workload model=\"moe-8x7b\"/>|<workload model=\"moe-8x7b\" iterations=\"$iterations\"/>|" "$file"
  for kv in "$@"; do
    sed -i "/wh::ModelPreset::${kv%%=*}\"/d" "$file"
    sed -i "s|  <topology |  <set param=\"wh::ModelPreset::${kv%%=*}\" value=\"${kv#*=}\"/>\n&|" "$file"
  done
}

# plan NAME MODEL_FILE GCDS MESH MICRO_BATCHES [PLAN_OPTION]...: the planner's table for
# that mesh in $out/NAME.plan (no scenario)
plan() {
  local name=$1 model=$2 gcds=$3 mesh=$4 m=$5
  shift 5
  "$whsim" plan --model "$model" --gcds "$gcds" --mesh "$mesh" --micro-batches "$m" \
    "$@" >"$out/$name.plan"
}

# best MODEL_FILE GCDS [PLAN_OPTION]...: the planner's best mesh (PPxEP)
best() {
  local model=$1 gcds=$2
  shift 2
  "$whsim" plan --model "$model" --gcds "$gcds" "$@" | awk '/ rank 1$/ { print $1 }'
}

# Framework comparison: MODEL PIPER_GCDS PLAN_OPTIONS
frameworks="fw-small:8:--flash fw-medium:32:--flash fw-large:80:--flash,--recompute
fw-super:512:--flash,--recompute"

if [ "$norun" = 0 ]; then
  # ---- skew and migration ----
  skew=$(model_ini skew-2b)
  zipf=(Routing=zipf ZipfS=1.0 RoutingDrift=0.01)
  migrate=(Migration=true MigrationThreshold=1.25 MigrationPeriod=2 MigrationRounds=8)
  emit skew-migration "$skew" 16 2x8 8 --flash
  edit skew-migration 6 "${zipf[@]}" "${migrate[@]}"
  emit skew-static "$skew" 16 2x8 8 --flash
  edit skew-static 6 "${zipf[@]}"
  emit skew-uniform "$skew" 16 2x8 8 --flash
  edit skew-uniform 2
  for name in skew-migration skew-static skew-uniform; do harness_run "$name"; done

  # ---- weak scaling ----
  emit weak-64 "$(model_ini piper-110b)" 64 8x8 8 --flash
  harness_run weak-64
  plan weak-64-m32 "$(model_ini piper-110b)" 64 8x8 32 --flash
  # two-stage slices: 2 x the layers of one stage
  emit weak-512 "$(model_ini piper-862b 4)" 64 2x32 4 --flash
  harness_run weak-512
  plan weak-512-m32 "$(model_ini piper-862b)" 512 16x32 32 --flash
  emit weak-1024 "$(model_ini piper-1.7t 2)" 64 2x32 4 --flash
  harness_run weak-1024
  plan weak-1024-m32 "$(model_ini piper-1.7t)" 1024 32x32 32 --flash

  # ---- framework comparison ----
  for entry in $frameworks; do
    IFS=: read -r model gcds opts <<<"$entry"
    IFS=, read -r -a opts <<<"$opts"
    file=$(model_ini "$model")
    mesh=$(best "$file" "$gcds" "${opts[@]}")
    echo "$mesh" >"$out/$model-piper.mesh"
    pp=${mesh%x*}
    plan "$model-piper" "$file" "$gcds" "$mesh" $((4 * pp)) "${opts[@]}"
    experts=$(awk -F= '/^Experts=/ { print $2 }' "$file")
    for n in "$gcds" 256; do
      ep=$(python3 -c "import math; print(math.gcd($experts, $n))")
      base=$model-flat-$n
      echo "$ep" >"$out/$base.ep"
      # the planner's prediction of PP 1 x EP on EP GCDs (memory not checked)
      plan "$base-model" "$file" "$ep" "1x$ep" 4 --set "wh::Piper::EpLimit=$ep" "${opts[@]}"
      # not simulated (2x the bytes of Medium's 256-GCD slice, near or over 30
      # minutes): the planner prices them
      case $model-$n in fw-large-256 | fw-super-*) continue ;; esac
      if [ "$model" = fw-small ] && [ "$n" = 8 ]; then
        slice=$file # whole
      else
        slice=$(model_ini "$model" 1)
      fi
      emit "$base" "$slice" "$ep" "1x$ep" 1 --set "wh::Piper::EpLimit=$ep" "${opts[@]}"
      sed -i "s|name=\"[^\"]*\"|name=\"$base\"|" "$out/$base.xml"
      edit "$base" 1 "DP=$n" AllToAll=direct
      harness_run "$base"
    done
    if [ "$model" = fw-small ]; then
      emit "$model-piper" "$file" "$gcds" "$mesh" $((4 * pp)) "${opts[@]}"
      harness_run "$model-piper"
    fi
  done
fi

python3 "$here/training.py" "$out" "$report" "$check"
