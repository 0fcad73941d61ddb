# The options every validation harness takes (see validation/README.md), for
# `source`-ing from a harness's run.sh:
#
#   parse_options "${BASH_SOURCE[0]}" "$@"
#
# sets check (--check) and norun (--no-run) to 0 or 1; --help prints the comment
# block at the top of the harness (up to its `set -euo pipefail` line) and exits 0; any
# other argument is refused with exit status 2.

parse_options() {
  local script=$1 arg
  shift
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
      echo "run.sh: unknown argument $arg (options: --check, --no-run, --help)" >&2
      exit 2
      ;;
    esac
  done
}
