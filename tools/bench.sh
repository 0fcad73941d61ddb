#!/usr/bin/env bash
# Benchmarks of wormhole-sim (`make bench`): fat-tree permutations from 128 to 8,192
# hosts, training iterations and Frontier-like dragonflies.
#
#   tools/bench.sh BUILD_DIR
#
# Runs every case below with BUILD_DIR/whsim under /usr/bin/time -v, prints a
# table and writes BUILD_DIR/bench.json (one object per case) and
# BUILD_DIR/bench.md. It reports only: a slow number never fails the script,
# a failing whsim run does.
#
# Environment: WH_SOURCE_ROOT  source tree (default: the parent of tools/)
#              WH_BENCH_CASES  space-separated cases (scenario:limit) instead of the list
#              WH_BENCH_WALL_LIMIT  wall-clock limit of the 1024-GPU training case (600 s)
#              WH_BENCH_SCHEDULER  event scheduler of every case (heap, calendar; default:
#                                  whsim's), recorded per case in bench.json
set -euo pipefail

build=${1:-build}
root=${WH_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
whsim="$build/whsim"
# Each case: a scenario under scenarios/ and a wall-clock limit in seconds (0: none).
# The 1024-GPU training case reports how far it got if it does not finish in time.
cases=(
  "bench-fattree-k8:0"
  "bench-fattree-k16:0"
  "bench/bench-fattree-k24:0"
  "bench/bench-fattree-k32:0"
  "presets/gpt-13b-dcqcn:0"
  "presets/gpt-13b-hpcc:0"
  "presets/gpt-175b-dcqcn:${WH_BENCH_WALL_LIMIT:-600}"
  "frontier/frontier-1group:0"
  "frontier/frontier-4group:0"
)
if [ -n "${WH_BENCH_CASES:-}" ]; then
  read -r -a cases <<<"$WH_BENCH_CASES"
fi

if [ ! -x "$whsim" ]; then
  echo "bench: $whsim not found; build first (make build)" >&2
  exit 1
fi

time_bin=/usr/bin/time
if [ ! -x "$time_bin" ]; then
  echo "bench: /usr/bin/time is missing, so peak RSS is not measured; install it with:" >&2
  echo "  sudo apt-get install -y time" >&2
  echo "bench: falling back to whsim's own numbers (no RSS)" >&2
  time_bin=
fi

outroot="$build/bench"
mkdir -p "$outroot"
records=()
for entry in "${cases[@]}"; do
  path=${entry%%:*}
  limit=${entry##*:}
  c=$(basename "$path")
  scen="$root/scenarios/$path.xml"
  out="$outroot/$c"
  rm -rf "$out"
  mkdir -p "$out"
  echo "bench: running $c ..." >&2
  status=0
  limit_opt=()
  [ "$limit" != 0 ] && limit_opt=(--wall-limit "$limit") # 0: no limit (whsim refuses 0)
  [ -n "${WH_BENCH_SCHEDULER:-}" ] && limit_opt+=(--scheduler "$WH_BENCH_SCHEDULER")
  if [ -n "$time_bin" ]; then
    "$time_bin" -v -o "$out/time.txt" "$whsim" run "$scen" --out "$out" --quiet \
      "${limit_opt[@]}" >"$out/whsim.log" 2>&1 || status=$?
  else
    "$whsim" run "$scen" --out "$out" --quiet "${limit_opt[@]}" >"$out/whsim.log" 2>&1 ||
      status=$?
  fi
  if [ "$status" -ne 0 ] || [ ! -f "$out/summary.json" ]; then
    echo "bench: whsim failed on $c (exit $status); its output:" >&2
    cat "$out/whsim.log" >&2
    # /usr/bin/time notes how whsim ended ("Command exited with ...", "... by signal N").
    if [ -f "$out/time.txt" ]; then grep -E '^Command (exited|terminated)' "$out/time.txt" >&2 || true; fi
    exit 1
  fi
  records+=("$c" "$out")
done

# Everything else (parsing, table, JSON, markdown) in python3.
python3 - "$build" "${records[@]}" <<'PY'
import json, os, re, sys

build = sys.argv[1]
args = sys.argv[2:]
rows = []
for case, out in zip(args[0::2], args[1::2]):
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    rss_mb = cpu_s = None
    tpath = os.path.join(out, "time.txt")
    if os.path.exists(tpath):
        with open(tpath) as f:
            text = f.read()
        m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
        if m:
            rss_mb = round(int(m.group(1)) / 1024.0, 1)  # KiB -> MiB
        u = re.search(r"User time \(seconds\):\s*([\d.]+)", text)
        k = re.search(r"System time \(seconds\):\s*([\d.]+)", text)
        if u and k:
            cpu_s = float(u.group(1)) + float(k.group(1))
    wall = s["wall_s"] if s.get("wall_s", 0) > 0 else 1e-9
    ev, lt = s["events_executed"], s["link_traversals"]
    rows.append({
        "case": case,
        "scheduler": s.get("scheduler"),
        "hosts": s["hosts"],
        "events": ev,
        "events_per_s": round(ev / wall),
        "link_traversals": lt,
        "link_traversals_per_s": round(lt / wall),
        "sim_end_ps": s["sim_end_ps"],
        "wall_s": s["wall_s"],
        "ns_per_event": round(wall * 1e9 / ev, 1) if ev else None,
        # the whole process (building the network and writing outputs included)
        "cpu_s": cpu_s,
        "link_traversals_per_cpu_s": round(lt / cpu_s) if cpu_s else None,
        "peak_rss_mb": rss_mb,
        "peak_rss_kb_per_host": round(rss_mb * 1024.0 / s["hosts"], 1) if rss_mb else None,
    })
    if "ops" not in s and s.get("stopped_early"):
        rows[-1]["stopped_early"] = s["stopped_early"]
    if "topology_preset" in s:
        rows[-1]["flows"] = s["flows_completed"]
        rows[-1]["reroutes"] = s["reroutes"]
    if "ops" in s:
        rows[-1]["gpus"] = s.get("ranks")
        rows[-1]["ops"] = s["ops"]
        if "stopped_early" in s:
            rows[-1]["stopped_early"] = s["stopped_early"]
            rows[-1]["ops_done"] = s.get("ops_done")
        else:
            rows[-1]["iteration_time_ps"] = s["iteration_time_ps"]

with open(os.path.join(build, "bench.json"), "w") as f:
    json.dump(rows, f, indent=2)
    f.write("\n")

TARGET_LT = 3.4e6          # link traversals/s at 128 hosts
TARGET_CPU = {3456: 4.0e6, 8192: 2.5e6}  # link traversals per CPU-second, larger fat-trees
TARGET_RSS = 200.0         # MB at 1024 hosts
base = next((r["link_traversals_per_s"] for r in rows if r["case"] == "bench-fattree-k8"), None)

def target(r):
    if "ops" in r or not r["case"].startswith("bench-fattree"):
        return "-"
    if r["hosts"] == 128:
        return ">= 3.40 M trav/s"
    if r["hosts"] == 1024:
        t = ">= 1.70 M trav/s, RSS < 200 MB"
        return t
    if r["hosts"] in TARGET_CPU:
        return ">= %.2f M trav/CPU-s" % (TARGET_CPU[r["hosts"]] / 1e6)
    return "-"

def verdict(r):
    notes = []
    if "reroutes" in r:
        return "%d flows, %d path changes" % (r["flows"], r["reroutes"])
    if "ops" in r:
        if "iteration_time_ps" in r:
            return "iteration %.3f ms" % (r["iteration_time_ps"] / 1e9)
        return "stopped (%s): %s of %s ops" % (r["stopped_early"], r["ops_done"], r["ops"])
    lt = r["link_traversals_per_s"]
    if r["hosts"] == 128:
        notes.append("met" if lt >= TARGET_LT else "below")
    elif r["hosts"] == 1024:
        notes.append("rate met" if lt >= TARGET_LT / 2 else "rate below")
        if base:
            notes.append("%.0f%% of k8" % (100.0 * lt / base))
        if r["peak_rss_mb"] is None:
            notes.append("RSS n/a")
        else:
            notes.append("RSS met" if r["peak_rss_mb"] < TARGET_RSS else "RSS above")
    elif r["hosts"] in TARGET_CPU:
        if r["link_traversals_per_cpu_s"] is None:
            notes.append("CPU time n/a")
        else:
            notes.append("met" if r["link_traversals_per_cpu_s"] >= TARGET_CPU[r["hosts"]]
                         else "below")
        if r.get("stopped_early"):
            notes.append("first %.0f us (%s)" % (r["sim_end_ps"] / 1e6, r["stopped_early"]))
    return ", ".join(notes) or "-"

def rss(r):
    return "n/a" if r["peak_rss_mb"] is None else "%.1f" % r["peak_rss_mb"]

def per_host(r):
    return "n/a" if r["peak_rss_kb_per_host"] is None else "%.1f" % r["peak_rss_kb_per_host"]

def per_cpu(r):
    v = r["link_traversals_per_cpu_s"]
    return "n/a" if v is None else "%.2f" % (v / 1e6)

head = ["case", "scheduler", "hosts", "events", "M ev/s", "ns/event", "link trav.", "M trav/s",
        "M trav/CPU-s", "sim end (us)", "wall (s)", "peak RSS (MB)", "RSS/host (KB)", "target",
        "vs target"]
body = [[r["case"], str(r["scheduler"]), str(r["hosts"]), str(r["events"]),
         "%.2f" % (r["events_per_s"] / 1e6), "%.0f" % (r["ns_per_event"] or 0),
         str(r["link_traversals"]), "%.2f" % (r["link_traversals_per_s"] / 1e6), per_cpu(r),
         "%.1f" % (r["sim_end_ps"] / 1e6), "%.3f" % r["wall_s"], rss(r), per_host(r),
         target(r), verdict(r)] for r in rows]

notes = [
    "Targets: >= 3.4 M link traversals/s at 128 hosts; at 1024 hosts no worse than",
    "half that (>= 1.7 M/s) and peak RSS < 200 MB; >= 4 M link traversals per CPU-second",
    "at 3456 hosts (whole run) and >= 2.5 M at 8192 hosts (the scenario's stop time).",
    "For scale (published reference figures, NOT measured here), 128-host case:",
    "stock ns-3 3.37 ~0.03 M traversals/s (DCTCP); htsim ~1.7 M traversals/s.",
]

w = [max(len(x) for x in col) for col in zip(head, *body)]
line = lambda cells: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(cells))
print(line(head))
print("  ".join("-" * x for x in w))
for b in body:
    print(line(b))
print()
for n in notes:
    print(n)
print("\nwrote %s and %s" % (os.path.join(build, "bench.json"), os.path.join(build, "bench.md")))

with open(os.path.join(build, "bench.md"), "w") as f:
    f.write("| " + " | ".join(head) + " |\n")
    f.write("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head) - 2)) + "|---|---|\n")
    for b in body:
        f.write("| " + " | ".join(b) + " |\n")
    f.write("\n")
    f.write("Targets: >= 3.4 M link traversals/s at 128 hosts; at 1024 hosts no worse than "
            "half that (>= 1.7 M/s) and peak RSS < 200 MB; >= 4 M link traversals per "
            "CPU-second at 3456 hosts (whole run) and >= 2.5 M at 8192 hosts (the scenario's "
            "stop time).\n\n")
    f.write("For scale (published reference figures, **not measured here**), 128-host case: "
            "stock ns-3 3.37 ~0.03 M traversals/s (DCTCP); htsim ~1.7 M traversals/s.\n")
PY
