# The start shared by the Wormhole validation scripts (run.sh, skip.sh, memo.sh),
# `source`-d after their `set -euo pipefail`:
#
#   wormhole_setup SCRIPT "EXTRA_OPTIONS" "$@"
#
# parses --check and --quick (setting check and quick to 0 or 1), each option named in
# EXTRA_OPTIONS (e.g. "table": --table sets table=1), --help (prints the comment block
# at the top of SCRIPT, up to its `set -euo pipefail` line) and an optional BUILD_DIR;
# any other option exits with status 2. Then sets root, build (BUILD_DIR, default
# build), whsim, here (validation/wormhole), work (a temporary directory removed at
# exit), failures and fail(); exits with status 2 if whsim is not built.
#
# wormhole_finish NAME ends a script: the bounds into $report, exit 1 on a missed one
# with --check.
#
# wormhole_dumbbells PREFIX writes the dumbbells of skip.sh and seeds.sh into $work.
wormhole_setup() {
  local script=$1 extras=$2 name x opts="--check, --quick"
  name=$(basename "$script")
  shift 2
  check=0
  quick=0
  for x in $extras; do
    printf -v "$x" 0
    opts+=", --$x"
  done
  while [ $# -gt 0 ]; do
    case $1 in
    --check) check=1 ;;
    --quick) quick=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      x=${1#--}
      if [[ " $extras " != *" $x "* ]]; then
        echo "$name: unknown argument $1 (options: $opts, --help)" >&2
        exit 2
      fi
      printf -v "$x" 1
      ;;
    *) break ;;
    esac
    shift
  done
  root=$(cd "$(dirname "$script")/../.." && pwd)
  build=${1:-$root/build}
  whsim="$build/whsim"
  here="$root/validation/wormhole"
  [ -x "$whsim" ] || {
    echo "$name: $whsim is not built (make build)" >&2
    exit 2
  }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  failures=()
}

fail() {
  failures+=("$1")
  echo "FAIL: $1" >&2
}

# wormhole_finish NAME: appends the bounds (met, or the list of those missed) to
# $report, says so on stderr and exits: 1 with --check when a bound was missed, else 0.
wormhole_finish() {
  {
    echo
    if [ ${#failures[@]} -eq 0 ]; then
      echo "## Bounds: all met"
    else
      echo "## Bounds missed"
      echo
      for f in "${failures[@]}"; do echo "- $f"; done
    fi
  } >> "$report"
  echo "$1: wrote $report" >&2
  if [ "$check" = 1 ] && [ ${#failures[@]} -gt 0 ]; then
    exit 1
  fi
  exit 0
}

# wormhole_dumbbells PREFIX: $work/PREFIX{dcqcn,hpcc,dctcp}.xml, four flows 100 us apart
# (sizes 1, 1.5, 2, 2.5 x the base: DCQCN 300 MB, HPCC 60 MB with Wai 1.25 Gb/s, DCTCP
# 1.5 GB) on one 100 Gb/s bottleneck, with the detection settings the reports state:
# the delivery rate over 1 ms and l 10000 (HPCC 0.2 ms and 2000).
wormhole_dumbbells() {
  local slow=(wh::WormholeStudy::Quantity=delivered-avg wh::WormholeStudy::AvgPeriods=1000 wh::Wormhole::Window=10000)
  local fast=(wh::WormholeStudy::Quantity=delivered-avg wh::WormholeStudy::AvgPeriods=200 wh::Wormhole::Window=2000)
  dumbbell_xml "$1dcqcn" dcqcn 300000000 "${slow[@]}"
  dumbbell_xml "$1hpcc" hpcc 60000000 wh::HpccCc::Wai=1.25Gbps "${fast[@]}"
  dumbbell_xml "$1dctcp" dctcp 1500000000 wh::DctcpCc::Kmin=250KB wh::DctcpCc::Kmax=350KB \
    wh::RdmaFlow::Mtu=4096B "${slow[@]}"
}

# dumbbell_xml NAME CC SIZE SETS...: one of them into $work/NAME.xml
dumbbell_xml() {
  local name=$1 cc=$2 size=$3 i s
  shift 3
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<scenario name=\"$name\" seed=\"1\" cc=\"$cc\">"
    echo '  <topology type="wh::Dumbbell"><param name="Pairs" value="4"/></topology>'
    for s in "$@"; do echo "  <set param=\"${s%%=*}\" value=\"${s#*=}\"/>"; done
    echo '  <flows>'
    for i in 0 1 2 3; do
      echo "    <flow src=\"$i\" dst=\"$((4 + i))\" size=\"$((size * (2 + i) / 2))B\" start=\"$((i * 100))us\"/>"
    done
    echo '  </flows>'
    echo '</scenario>'
  } > "$work/$name.xml"
}
