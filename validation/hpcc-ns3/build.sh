#!/usr/bin/env bash
# Builds the HPCC project's ns-3.17 simulator (scratch/third.cc), the reference engine of
# validation/hpcc-ns3/run.sh, as a separate program: never linked into the project.
#
#   validation/hpcc-ns3/build.sh [--tarball PATH]
#
# The source is the public repository alibaba-edu/High-Precision-Congestion-Control at
# commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be, archived whole (GPL v2; see
# docs/hpcc-ns3.md for where to get it). The script checks the archive's sha256,
# unpacks it into $WH_BUILD/hpcc-ns3/src, applies the patches in
# validation/hpcc-ns3/patches/ (none are needed for the optimized build), and compiles
# `third` with Ninja from the per-module lists of each src/<m>/wscript (ninja-gen.py;
# no waf, no Python 2). A build whose archive hash, patches and generator are unchanged
# is reused: the second call costs a hash.
#
# Options:
#   --tarball PATH   the archive (default: $WH_HPCC_TARBALL, else
#                    ../shared/third-party/hpcc-ns3/hpcc-9f4be2a.tar.gz from the
#                    repository root)
#
# Environment:
#   WH_BUILD          build directory, relative to the source tree (default: build)
#   WH_HPCC_TARBALL   the archive, if --tarball is not given
#   WH_HPCC_JOBS      compile jobs (default: 2)
#
# Exit status: 0 built (or reused; prints the program's path), 1 the build failed (the
# log's last lines are printed), 2 bad input: no archive, or one whose sha256 differs
# (the expected path and hash are printed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
expected_sha=da07641d10b292683617e06c5a0a9f142e25d13b0abbffef1c64478c52c9ac19
tarball=${WH_HPCC_TARBALL:-../shared/third-party/hpcc-ns3/hpcc-9f4be2a.tar.gz}
while [ $# -gt 0 ]; do
  case $1 in
  --tarball)
    [ $# -ge 2 ] || { echo "build.sh: --tarball needs a path" >&2; exit 2; }
    tarball=$2
    shift 2
    ;;
  --tarball=*) tarball=${1#--tarball=}; shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "build.sh: unknown argument $1 (options: --tarball PATH, --help)" >&2; exit 2 ;;
  esac
done
build=${WH_BUILD:-build}
out="$build/hpcc-ns3"
case $out in /*) abs_out=$out ;; *) abs_out="$root/$out" ;; esac
jobs=${WH_HPCC_JOBS:-2}

if [ ! -f "$tarball" ]; then
  echo "build.sh: $tarball: no such regular file; expected the HPCC simulator's source" \
    "archive there (sha256 $expected_sha), or give --tarball PATH or WH_HPCC_TARBALL" >&2
  exit 2
fi
sha=$(sha256sum <"$tarball" | cut -d' ' -f1)
if [ "$sha" != "$expected_sha" ]; then
  echo "build.sh: $tarball: sha256 $sha, expected $expected_sha" >&2
  exit 2
fi
patches=()
for p in "$here"/patches/*.patch; do
  [ -e "$p" ] && patches+=("$p")
done
stamp=$( (echo "$sha"; cat "$here/ninja-gen.py" "${patches[@]}") | sha256sum | cut -d' ' -f1)
if [ -x "$out/third" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$out/third"
  exit 0
fi
# Another archive starts afresh; the same archive (a build cut short, or other patches or
# generator) is rebuilt incrementally: tar keeps the files' times, so Ninja recompiles
# only what a patch touched.
if [ "$(cat "$out/archive" 2>/dev/null)" != "$sha" ]; then
  rm -rf "$out"
fi
rm -rf "$out/src" "$out/stamp"
mkdir -p "$out/src"
echo "$sha" >"$out/archive"
log="$out/build.log"
fail() {
  echo "build.sh: $1; the last lines of $log:" >&2
  tail -n 25 "$log" >&2
  exit 1
}
tar xzf "$tarball" -C "$out/src" --strip-components=1 >"$log" 2>&1 || fail "unpacking failed"
sim="$abs_out/src/simulation"
for p in "${patches[@]}"; do
  echo "build.sh: applying $(basename "$p")" >>"$log"
  patch -d "$sim" -p1 <"$p" >>"$log" 2>&1 || fail "patch $(basename "$p") failed"
done
python3 "$here/ninja-gen.py" "$sim" "$abs_out" >>"$log" 2>&1 || fail "ninja-gen.py failed"
echo "build.sh: compiling the HPCC simulator ($jobs jobs, about 100 s with 2 idle cores) ..." >&2
nice ninja -C "$out" -j "$jobs" third >>"$log" 2>&1 || fail "the build failed"
echo "$stamp" >"$out/stamp"
echo "$out/third"
