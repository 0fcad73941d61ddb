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
#   WH_HPCC_CCS            CCs to run (default: "dcqcn hpcc timely dctcp")
#   WH_HPCC_SCENARIOS      scenario names to run (default: every *.xml here)
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
# one_pair SCEN CC DIR TAG: a native run and an HPCC-simulator run, CPU times in DIR/*.cpu
one_pair() {
  local scen=$1 cc=$2 d=$3 tag=$4 sets=() s
  for s in $(cc_sets "$cc"); do sets+=(--set "$s"); done
  mkdir -p "$d"
  if ! $timer -f "%U %S" -o "$d/native$tag.cpu" "$whsim" run "$scen" --cc "$cc" "${sets[@]}" \
    --out "$d/native$tag" --quiet >"$d/native$tag.log" 2>&1; then
    echo "run.sh: FAILED: whsim run $scen --cc $cc (see $d/native$tag.log)" >&2
    failed=1
  fi
  rm -rf "$d/hpcc$tag"
  if ! "$whsim" export-hpcc "$scen" --cc "$cc" "${sets[@]}" --out "$d/hpcc$tag" \
    >"$d/export$tag.log" 2>&1; then
    echo "run.sh: FAILED: whsim export-hpcc $scen --cc $cc" >&2
    cat "$d/export$tag.log" >&2
    failed=1
    return
  fi
  if ! (cd "$d/hpcc$tag" && $timer -f "%U %S" -o ../"hpcc$tag.cpu" "$third" config.txt \
    >third.log 2>&1); then
    echo "run.sh: FAILED: the HPCC simulator on $d/hpcc$tag (see third.log there)" >&2
    failed=1
  fi
}

if [ "$norun" = 0 ]; then
  if [ ! -x "$whsim" ]; then
    echo "run.sh: $whsim not found; build first (make build)" >&2
    exit 1
  fi
  status=0
  third=$("$here/build.sh") || status=$?
  [ "$status" = 0 ] || exit "$status"
  third="$root/$third"
  rm -rf "$out"
  for name in "${names[@]}"; do
    for cc in "${ccs[@]}"; do
      echo "run.sh: $name, $cc: native and HPCC simulator ..." >&2
      one_pair "$here/$name.xml" "$cc" "$out/$name/$cc" ""
    done
  done
  speed=fattree-k8-permutation
  if [ "$speed_repeat" -gt 0 ] && [ -f "$here/$speed.xml" ]; then
    for i in $(seq 1 "$speed_repeat"); do
      echo "run.sh: speed, $speed, dcqcn: run $i of $speed_repeat ..." >&2
      one_pair "$here/$speed.xml" dcqcn "$out/speed" "-$i"
    done
    echo "run.sh: speed, $speed, dcqcn: Wormhole (whsim compare) ..." >&2
    $timer -f "%U %S" -o "$out/speed/compare.cpu" "$whsim" compare "$here/$speed.xml" \
      --cc dcqcn $(for s in $(cc_sets dcqcn); do printf -- '--set %s ' "$s"; done) \
      --out "$out/speed/compare" --quiet >"$out/speed/compare.log" 2>&1 || failed=1
  fi
fi

status=0
python3 "$here/compare.py" "$here" "$out" "$report" "$check" "$speed_repeat" \
  "${ccs[*]}" "${names[@]}" || status=$?
if [ "$failed" != 0 ] && [ "$status" = 0 ]; then
  status=1
fi
exit "$status"
