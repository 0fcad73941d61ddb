#!/usr/bin/env bash
# The native engine against the HPCC project's ns-3 simulator (the Wormhole paper's
# baseline), for DCQCN, HPCC, TIMELY and DCTCP.
#
#   validation/hpcc-ns3/run.sh [--check] [--no-run]
#
# Builds the reference with build.sh (once; reused after), then runs every scenario here
# (*.xml) under each CC on both engines: natively (`whsim run --cc CC`) and on the HPCC
# simulator with the inputs `whsim export-hpcc --cc CC` writes. Per CC the native frames
# are set to the HPCC simulator's (HeaderBytes 36 B, +42 B of INT with HPCC, +8 B of
# timestamp with TIMELY; ACKs 48 B, 76 B with HPCC) and DCQCN's CNPs to one per marked
# packet (CnpInterval=0), as the HPCC simulator sends them (docs/hpcc-ns3.md). It writes
# validation/hpcc-ns3/report.md, which it also prints:
#
#   - single-path scenarios (dumbbells, incasts), flow by flow: per-flow FCTs of both
#     engines and their difference (HPCC - native) / native, the mean's difference;
#     bounds: mean within 5%, every flow within 15%;
#   - multi-path scenarios (fat-tree permutations; the engines hash flows onto paths
#     differently): mean, p50 and p99 FCT; bounds: mean and p99 within 10%;
#   - PFC (pfc-incast-16to1): PAUSE frames and total pause time on both engines;
#   - speed: each engine's CPU time (user + system, /usr/bin/time) on every run, and on
#     the k=8 permutation (8 MB per host) WH_HPCC_SPEED_REPEAT alternated runs of each,
#     the ratio of the fastest; Wormhole's own speedup there (`whsim compare`, skip mode)
#     and so its speed over the HPCC simulator;
#   - a verdict per scenario and CC: PASS, EXPLAINED (a miss that a named model
#     difference accounts for, within that difference's measured bound; EXPLAINED below)
#     or FAIL.
#
# Options:
#   --check   also exit 1 on a FAIL, a missing run, or an HPCC-simulator run that a repeat
#             does not reproduce; each failure is printed as "run.sh: check failed: ...",
#             else "run.sh: check passed"
#   --no-run  run nothing: analyse the outputs an earlier run left in
#             $WH_BUILD/validation-hpcc-ns3
#
# Environment:
#   WH_BUILD               build directory (default: build)
#   WH_HPCC_TARBALL        the HPCC simulator's source archive (build.sh's default: the
#                          project's ../shared/third-party/hpcc-ns3/hpcc-9f4be2a.tar.gz)
#   WH_HPCC_THIRD          an HPCC simulator program built elsewhere: build.sh is skipped
#   WH_HPCC_CCS            CCs to run (default: "dcqcn hpcc timely dctcp")
#   WH_HPCC_SCENARIOS      scenario names to run (default: every *.xml here)
#   WH_HPCC_SEEDS          seeds of every scenario but the k=8 fat-tree (default: 1 to 8)
#   WH_HPCC_K8_SEEDS       seeds of the k=8 fat-tree (default: "1 2")
#   WH_HPCC_SPEED_REPEAT   alternated runs of each engine for the speed ratio (default: 3;
#                          0 skips them)
#   WH_REPORT              where to write the report (default: validation/hpcc-ns3/report.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
root=$(cd "$here/../.." && pwd)
cd "$root"
build=${WH_BUILD:-build}
whsim="$build/whsim"
out="$build/validation-hpcc-ns3"
report=${WH_REPORT:-$here/report.md}
read -r -a ccs <<<"${WH_HPCC_CCS:-dcqcn hpcc timely dctcp}"
speed_repeat=${WH_HPCC_SPEED_REPEAT:-3}
timer=/usr/bin/time

if [ -n "${WH_HPCC_SCENARIOS:-}" ]; then
  read -r -a names <<<"$WH_HPCC_SCENARIOS"
else
  names=()
  for f in "$here"/*.xml; do names+=("$(basename "$f" .xml)"); done
fi

# The native frame sizes and CNP timing that match the HPCC simulator's, per CC.
cc_sets() {
  case $1 in
  dcqcn) echo "wh::RdmaFlow::HeaderBytes=36B wh::RdmaFlow::ControlBytes=48B wh::RdmaFlow::CnpInterval=0ns" ;;
  hpcc) echo "wh::RdmaFlow::HeaderBytes=78B wh::RdmaFlow::ControlBytes=76B" ;;
  timely) echo "wh::RdmaFlow::HeaderBytes=44B wh::RdmaFlow::ControlBytes=48B" ;;
  dctcp) echo "wh::RdmaFlow::HeaderBytes=36B wh::RdmaFlow::ControlBytes=48B" ;;
  esac
}

failed=0
# one_pair SCEN CC SEED DIR TAG: a native run and an HPCC-simulator run of SCEN with
# seed SEED into DIR/native$TAG and DIR/hpcc$TAG, their CPU times in DIR/*$TAG.cpu
one_pair() {
  local scen=$1 cc=$2 seed=$3 d=$4 tag=$5 sets=() s
  for s in $(cc_sets "$cc"); do sets+=(--set "$s"); done
  mkdir -p "$d"
  if ! $timer -f "%U %S" -o "$d/native$tag.cpu" "$whsim" run "$scen" --cc "$cc" --seed "$seed" \
    "${sets[@]}" --set "wh::Link::DelayJitter=$((seed - 1))" --out "$d/native$tag" --quiet \
    >"$d/native$tag.log" 2>&1; then
    echo "run.sh: FAILED: whsim run $scen --cc $cc (see $d/native$tag.log)" >&2
    failed=1
  fi
  rm -rf "$d/hpcc$tag"
  if ! "$whsim" export-hpcc "$scen" --cc "$cc" --seed "$seed" "${sets[@]}" --out "$d/hpcc$tag" \
    >"$d/export$tag.log" 2>&1; then
    echo "run.sh: FAILED: whsim export-hpcc $scen --cc $cc" >&2
    cat "$d/export$tag.log" >&2
    failed=1
    return
  fi
  perturb "$d/hpcc$tag/topology.txt" "$seed"
  run_third "$d/hpcc$tag" "$d/hpcc$tag.cpu" "$seed"
}

# perturb TOPOLOGY SEED: ensemble member SEED > 1 of the HPCC simulator: each link 0 or 1
# ns longer (its time resolution), drawn per link and member by a fixed hash, as the
# native member's wh::Link::DelayJitter adds 0 or 1 ps per port; member 1 is unchanged.
perturb() {
  [ "$2" -gt 1 ] || return 0
  awk -v s="$2" 'NR > 2 && NF == 5 {
      d = substr($4, 1, length($4) - 2) + int(((NR * 2654435761 + s * 40503) % 1000003) / 7) % 2
      $4 = d "ns"
    } { print }' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

# run_third DIR CPU_FILE SEED: the HPCC simulator on DIR/config.txt, its random stream
# (ECN marking draws) that of run SEED (ns-3's RngRun)
run_third() {
  local cpu=$2
  case $cpu in /*) ;; *) cpu="$root/$cpu" ;; esac
  if ! (cd "$1" && NS_GLOBAL_VALUE="RngRun=$3" $timer -f "%U %S" -o "$cpu" "$third" \
    config.txt >third.log 2>&1); then
    echo "run.sh: FAILED: the HPCC simulator on $1 (see third.log there)" >&2
    failed=1
  fi
}

# variants NAME CC DIR SEED: the diagnostic runs differences.csv lists for NAME and CC,
# each with one named difference removed on one engine (DIR/hpcc-D or DIR/native-D)
variants() {
  local name=$1 cc=$2 d=$3 seed=$4 scen diff side overrides kv sets=() s
  while IFS=, read -r scen c diff side overrides; do
    [ "$scen" = "$name" ] && [ "$c" = "$cc" ] && [ "$side" != documented ] || continue
    echo "run.sh: $name, $cc, seed $seed: without difference $diff ($side) ..." >&2
    if [ "$side" != native ]; then
      rm -rf "$d/hpcc-$diff"
      cp -r "$d/hpcc" "$d/hpcc-$diff"
      for kv in ${overrides#*;}; do
        sed -i "s|^${kv%%=*} .*|${kv%%=*} ${kv#*=}|" "$d/hpcc-$diff/config.txt"
      done
      run_third "$d/hpcc-$diff" "$d/hpcc-$diff.cpu" "$seed"
    fi
    if [ "$side" != hpcc ]; then
      sets=()
      for s in $(cc_sets "$cc") ${overrides%;*} "wh::Link::DelayJitter=$((seed - 1))"; do
        sets+=(--set "$s")
      done
      "$whsim" run "$here/$name.xml" --cc "$cc" --seed "$seed" "${sets[@]}" \
        --out "$d/native-$diff" --quiet >"$d/native-$diff.log" 2>&1 || failed=1
    fi
  done < <(grep -v '^#' "$here/differences.csv" | tail -n +2)
}

# The seeds of a scenario: each seed is an ensemble member, a run on both engines
# perturbed without changing the model: natively --seed and wh::Link::DelayJitter=seed-1,
# on the HPCC simulator ns-3's RngRun=seed and links 0 or 1 ns longer (perturb); the seed
# moves the ECN marking draws (and on the fat-trees the permutation and the native ECMP
# hash). Contending flows' FCTs depend on those draws
# (docs/hpcc-ns3.md), so flows are compared by their mean over the seeds, and the
# fat-trees' FCT distributions pooled over them.
seeds_of() {
  case $1 in
  fattree-k8*) echo "${WH_HPCC_K8_SEEDS:-1 2}" ;;
  *) echo "${WH_HPCC_SEEDS:-1 2 3 4 5 6 7 8}" ;;
  esac
}

if [ "$norun" = 0 ]; then
  if [ ! -x "$whsim" ]; then
    echo "run.sh: $whsim not found; build first (make build)" >&2
    exit 1
  fi
  status=0
  if [ -n "${WH_HPCC_THIRD:-}" ]; then
    third=$WH_HPCC_THIRD
  else
    third=$("$here/build.sh") || status=$?
    [ "$status" = 0 ] || exit "$status"
  fi
  case $third in /*) ;; *) third="$root/$third" ;; esac
  rm -rf "$out"
  for name in "${names[@]}"; do
    for cc in "${ccs[@]}"; do
      for seed in $(seeds_of "$name"); do
        echo "run.sh: $name, $cc, seed $seed: native and HPCC simulator ..." >&2
        one_pair "$here/$name.xml" "$cc" "$seed" "$out/$name/$cc/seed-$seed" ""
        variants "$name" "$cc" "$out/$name/$cc/seed-$seed" "$seed"
      done
    done
  done
  speed=fattree-k8-permutation
  if [ "$speed_repeat" -gt 0 ] && [ -f "$here/$speed.xml" ]; then
    for i in $(seq 1 "$speed_repeat"); do
      echo "run.sh: speed, $speed, dcqcn: run $i of $speed_repeat ..." >&2
      one_pair "$here/$speed.xml" dcqcn 1 "$out/speed" "-$i"
    done
    echo "run.sh: speed, $speed, dcqcn: Wormhole (whsim compare) ..." >&2
    $timer -f "%U %S" -o "$out/speed/compare.cpu" "$whsim" compare "$here/$speed.xml" \
      --cc dcqcn $(for s in $(cc_sets dcqcn); do printf -- '--set %s ' "$s"; done) \
      --out "$out/speed/compare" --quiet >"$out/speed/compare.log" 2>&1 || failed=1
  fi
fi

status=0
seeds=()
for name in "${names[@]}"; do seeds+=("$name=$(seeds_of "$name")"); done
python3 "$here/compare.py" "$here" "$out" "$report" "$check" "$speed_repeat" \
  "${ccs[*]}" "${seeds[@]}" || status=$?
if [ "$failed" != 0 ] && [ "$status" = 0 ]; then
  status=1
fi
exit "$status"
