# The options every validation harness takes (see validation/README.md), for
# `source`-ing from a harness's run.sh:
#
#   parse_options "${BASH_SOURCE[0]}" "$@"
#
# sets check (--check) and norun (--no-run) to 0 or 1 and prog to the script's file name
# (which the messages below start with); --help prints the comment
# block at the top of the harness (up to its `set -euo pipefail` line) and exits 0; any
# other argument is refused with exit status 2.

parse_options() {
  local script=$1 arg
  shift
  prog=$(basename "$script")
  check=0
  norun=0
  for arg in "$@"; do
    case $arg in
    --check) check=1 ;;
    --no-run) norun=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "$prog: unknown argument $arg (options: --check, --no-run, --help)" >&2
      exit 2
      ;;
    esac
  done
}

# harness_setup SCRIPT NAME: for a harness that keeps its outputs in the build tree:
# cd to the source tree and set root, build (WH_BUILD, default build), whsim, out
# ($build/validation-NAME) and report (WH_REPORT, default the harness's report.md);
# unless --no-run, check that whsim is built and start out afresh.
harness_setup() {
  local here
  here=$(cd "$(dirname "$1")" && pwd)
  root=$(cd "$here/../.." && pwd)
  cd "$root"
  build=${WH_BUILD:-build}
  whsim="$build/whsim"
  out="$build/validation-$2"
  report=${WH_REPORT:-$here/report.md}
  if [ "$norun" = 0 ]; then
    if [ ! -x "$whsim" ]; then
      echo "$prog: $whsim not found; build first (make build)" >&2
      exit 1
    fi
    rm -rf "$out"
    mkdir -p "$out"
  fi
}

# harness_run NAME [DIR]: whsim run $out/NAME.xml --out $out/DIR (default NAME), its
# output in $out/DIR.log; a failing run prints that log and exits 1.
harness_run() {
  local name=$1 dir=${2:-$1}
  echo "$prog: $name ..." >&2
  if ! "$whsim" run "$out/$name.xml" --out "$out/$dir" --quiet >"$out/$dir.log" 2>&1; then
    echo "$prog: FAILED: $whsim run $out/$name.xml" >&2
    cat "$out/$dir.log" >&2
    exit 1
  fi
}
