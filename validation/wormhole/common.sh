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
