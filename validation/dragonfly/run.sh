#!/usr/bin/env bash
# Dragonfly routing report of wormhole-sim.
#
#   validation/dragonfly/run.sh [--check] [--no-run]
#
# Runs the dragonfly scenarios of tests/scenarios/, tests/deadlock/ and
# scenarios/frontier/ under each routing mode and writes validation/dragonfly/report.md
# (also printed):
#
#   - uniform random traffic inside one group (minimal routing): the share of the
#     injection bandwidth delivered while every host still has data to send (rates
#     sampled every 100 us, window 100 us .. 1 ms), and the same inside one Frontier
#     group (NIC injection; sampled every 20 us, window 40 us .. half the run);
#   - adversarial traffic (every host of group i to group i+1) on 8 groups, and on 4
#     Frontier groups: throughput (bytes / time of the last byte) with minimal, Valiant
#     and adaptive routing, the ratio adaptive / minimal, PFC pauses, path changes and
#     out-of-order arrivals;
#   - the deadlock control: PFC as the only flow control, with one virtual channel
#     for every hop class and with three.
#
# Without --check it reports only; a failing whsim run fails it (exit status 1).
#
# Options:
#   --check   also exit with status 1 if a bound the report states is missed: uniform
#             traffic delivers >= 90% of injection (both networks); adaptive routing
#             >= 2x minimal on 8 groups; every flow completes and no packet arrives out
#             of order in every run but the one-class deadlock control, which must
#             deadlock; PFC pauses in every adversarial run; and if a
#             rerun of the 8-group uniform and the Frontier 1-group scenarios does not
#             reproduce their flows and summary (wall time aside). Each failure is
#             printed as "run.sh: check failed: ...", else "run.sh: check passed"
#   --no-run  run no simulation: analyse the outputs an earlier run left in
#             $WH_BUILD/validation-dragonfly (to re-check or re-render a report)
#
# Environment:
#   WH_BUILD   build directory, relative to the source tree (default: build)
#   WH_REPORT  where to write the report (default: validation/dragonfly/report.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
harness_setup "${BASH_SOURCE[0]}" dragonfly

# run NAME SCENARIO ARGS...: a run that must succeed
run() {
  local name=$1 scen=$2
  shift 2
  echo "run.sh: $name ..." >&2
  if ! "$whsim" run "$scen" --out "$out/$name" --quiet "$@" >"$out/$name.log" 2>&1; then
    echo "run.sh: FAILED: $whsim run $scen $*" >&2
    cat "$out/$name.log" >&2
    exit 1
  fi
}

# run_deadlock NAME SCENARIO ARGS...: a run that may deadlock (whsim exits 1 then, with
# its outputs written and the deadlock in summary.json)
run_deadlock() {
  local name=$1 scen=$2 status=0
  shift 2
  echo "run.sh: $name ..." >&2
  "$whsim" run "$scen" --out "$out/$name" --quiet "$@" >"$out/$name.log" 2>&1 || status=$?
  if [ "$status" -gt 1 ] || [ ! -f "$out/$name/summary.json" ]; then
    echo "run.sh: FAILED: $whsim run $scen $*" >&2
    cat "$out/$name.log" >&2
    exit 1
  fi
}

# all_runs: every run of the report, and with --check the determinism reruns
all_runs() {
  run uniform tests/scenarios/dragonfly-uniform-group.xml --sample-period 100us
  for r in minimal valiant adaptive; do
    run "adv8-$r" tests/scenarios/dragonfly-adversarial-minimal.xml \
      --set "wh::Dragonfly::Routing=$r" --sample-period 100us
  done
  run adv8-adaptive-path tests/scenarios/dragonfly-adversarial-minimal.xml \
    --set wh::Dragonfly::Routing=adaptive --set wh::Dragonfly::UgalQueues=path \
    --sample-period 100us
  for r in minimal valiant adaptive; do
    run "frontier4-$r" scenarios/frontier/frontier-4group.xml --set "wh::Dragonfly::Routing=$r"
  done
  run frontier1 scenarios/frontier/frontier-1group.xml
  run frontier1-uniform scenarios/frontier/frontier-1group-uniform.xml --sample-period 20us
  run_deadlock deadlock-one-class tests/deadlock/dragonfly-single-class.xml
  run_deadlock deadlock-three-classes tests/deadlock/dragonfly-single-class.xml \
    --set wh::Dragonfly::VirtualChannels=true
  if [ "$check" = 1 ]; then
    run uniform-rerun tests/scenarios/dragonfly-uniform-group.xml --sample-period 100us
    run frontier1-rerun scenarios/frontier/frontier-1group.xml
  fi
}
if [ "$norun" = 0 ]; then
  all_runs
fi

python3 - "$out" "$report" "$check" <<'PY'
import collections, csv, json, os, sys, time

out, report, check = sys.argv[1:4]
check = check == "1"
failures = []


def require(ok, what):
    """Records a missed bound for --check."""
    if not ok:
        failures.append(what)


def summary(name):
    with open(os.path.join(out, name, "summary.json")) as f:
        return json.load(f)


def delivered(name, t0, t1):
    """Mean aggregate delivered rate (b/s) over the sampling periods in [t0, t1)."""
    agg = collections.defaultdict(float)
    with open(os.path.join(out, name, "rates.csv")) as f:
        for row in csv.DictReader(f):
            agg[int(row["period_start_ps"])] += float(row["delivered_bps"])
    periods = [agg[t] for t in sorted(agg) if t0 <= t < t1]
    return sum(periods) / len(periods)


def total_bytes(name):
    with open(os.path.join(out, name, "flows.csv")) as f:
        return sum(int(r["bytes"]) for r in csv.DictReader(f))


def tput(name):
    s = summary(name)
    return total_bytes(name) * 8 / (s["sim_end_ps"] * 1e-12)


US = 10**6
lines = ["# Dragonfly routing: report", "",
         "Generated by `validation/dragonfly/run.sh` on %s. Every run is the native engine in "
         "exact mode (packet by packet), DCQCN, PFC on, three virtual channels unless said "
         "otherwise. Throughput = bytes / time the last byte arrived; a steady rate is the mean "
         "of the 100 us samples of delivered bytes over the window given." % time.strftime("%Y-%m-%d"),
         ""]

def all_done(name):
    s = summary(name)
    require(s["flows_completed"] == s["flows"], "%s: %d of %d flows completed" % (
        name, s["flows_completed"], s["flows"]))
    require(s.get("out_of_order_packets", 0) == 0, "%s: %d packets out of order" % (
        name, s.get("out_of_order_packets", 0)))


s = summary("uniform")
frac = delivered("uniform", 100 * US, 1000 * US) / (s["hosts"] * 100e9)
require(frac >= 0.90, "uniform: %.1f%% of injection delivered (bound >= 90%%)" % (frac * 100))
all_done("uniform")
lines += ["## Uniform random traffic inside one group (minimal routing)", "",
          "`tests/scenarios/dragonfly-uniform-group.xml`: one group of 8 switches x 4 hosts, "
          "100 Gb/s; every host sends 64 flows of 256 KB to uniformly random hosts.", "",
          "| delivered, 100 us .. 1 ms | bound | flows completed | PFC pauses |",
          "|---:|---:|---:|---:|",
          "| %.1f%% of injection | >= 90%% | %d / %d | %d |" % (
              frac * 100, s["flows_completed"], s["flows"], s["pfc_pauses"]), ""]

s = summary("frontier1-uniform")
half = s["sim_end_ps"] // 2
nics = s["hosts"] // 2  # a NIC per MI250X: 2 GCDs each
ffrac = delivered("frontier1-uniform", 40 * US, half) / (nics * 200e9)
require(ffrac >= 0.90, "frontier1-uniform: %.1f%% of NIC injection delivered (bound >= 90%%)" % (
    ffrac * 100))
all_done("frontier1-uniform")
lines += ["The same on one Frontier group (`scenarios/frontier/frontier-1group-uniform.xml`: "
          "1024 GCDs, 512 NICs at 200 Gb/s; every GCD sends 16 messages of 256 KB to random "
          "GCDs; traffic inside a node does not use the NICs):", "",
          "| delivered, 40 us .. %.0f us (half the run) | bound | flows completed | PFC pauses | drops |" % (half / 1e6),
          "|---:|---:|---:|---:|---:|",
          "| %.1f%% of NIC injection | >= 90%% | %d / %d | %d | %d |" % (
              ffrac * 100, s["flows_completed"], s["flows"], s["pfc_pauses"], s["drops"]), ""]

lines += ["## Adversarial traffic: every host of group i to group i+1", "",
          "8 groups (`tests/scenarios/dragonfly-adversarial-*.xml`: 4 switches x 4 hosts per "
          "group, one 100 Gb/s global link between every pair of groups, 8 MB per host), and 4 "
          "Frontier groups (`scenarios/frontier/frontier-4group.xml`: 1024 GCDs per group, 4 "
          "global links of 200 Gb/s per pair, 1 MB per GCD).", "",
          "| network | routing | throughput (Gb/s) | vs minimal | steady rate 0.5-2 ms (Gb/s) | last byte (us) | PFC pauses | path changes | out-of-order packets | flows completed |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
base = {}
for net, prefix, sampled in (("8 groups", "adv8", True), ("4 Frontier groups", "frontier4", False)):
    modes = ["minimal", "valiant", "adaptive"] + (["adaptive-path"] if prefix == "adv8" else [])
    for m in modes:
        name = "%s-%s" % (prefix, m)
        s = summary(name)
        t = tput(name)
        if m == "minimal":
            base[prefix] = t
        steady = "%.0f" % (delivered(name, 500 * US, 2000 * US) / 1e9) if sampled else "-"
        all_done(name)
        require(s["pfc_pauses"] > 0, "%s: no PFC pause" % name)
        if prefix == "adv8" and m.startswith("adaptive"):
            require(t >= 2 * base[prefix], "%s: %.2fx minimal routing's throughput (bound >= 2x)"
                    % (name, t / base[prefix]))
        label = {"adaptive": "adaptive (UGAL, source-group queues)",
                 "adaptive-path": "adaptive (UGAL, whole-path queues)"}.get(m, m)
        lines.append("| %s | %s | %.0f | %.2fx | %s | %.0f | %d | %d | %d | %d / %d |" % (
            net, label, t / 1e9, t / base[prefix], steady, s["sim_end_ps"] / 1e6,
            s["pfc_pauses"], s["reroutes"], s["out_of_order_packets"], s["flows_completed"],
            s["flows"]))
lines += ["", "Acceptance: adaptive routing at least 2x the throughput of minimal routing on >= 4 "
          "groups (the 8-group network; adaptive routing can at best double minimal routing's "
          "throughput with 4 groups, where half the global links serve Valiant paths), PFC pauses "
          "in the runs with every flow completed, and no packet out of order.", ""]

one, three = summary("deadlock-one-class"), summary("deadlock-three-classes")
require(one.get("stopped_early") == "deadlock", "deadlock-one-class: no deadlock detected")
require(three.get("stopped_early") != "deadlock", "deadlock-three-classes: deadlocked")
all_done("deadlock-three-classes")
d = one.get("deadlock", {})
lines += ["## Deadlock control", "",
          "`tests/deadlock/dragonfly-single-class.xml`: the 8-group adversarial traffic with "
          "adaptive routing, ECN off (PFC is the only flow control), watchdog 1 ms.", "",
          "| virtual channels | outcome | flows completed | PFC pauses |", "|---|---|---:|---:|",
          "| one class for every hop | %s | %d / %d | %d |" % (
              "deadlock detected at %.0f us (no packet moved since %.0f us; %.1f MB held in %d "
              "switches, %d ports paused)" % (d["detected_at_ps"] / 1e6,
                                              d["no_packet_moved_since_ps"] / 1e6,
                                              d["buffered_bytes"] / 1e6,
                                              d["switches_holding_packets"], d["paused_ports"])
              if one.get("stopped_early") == "deadlock" else "completed",
              one["flows_completed"], one["flows"], one["pfc_pauses"]),
          "| three (next class after each global link) | %s | %d / %d | %d |" % (
              "deadlock" if three.get("stopped_early") == "deadlock" else "completed",
              three["flows_completed"], three["flows"], three["pfc_pauses"]), ""]

s = summary("frontier1")
all_done("frontier1")
lines += ["## One Frontier group", "",
          "`scenarios/frontier/frontier-1group.xml`: 128 nodes (1024 GCDs); every GCD sends 4 "
          "messages of 256 KB to uniformly random GCDs of the group.", "",
          "| flows completed | last byte (us) | PFC pauses | drops | events | wall (s) |",
          "|---:|---:|---:|---:|---:|---:|",
          "| %d / %d | %.1f | %d | %d | %d | %.2f |" % (
              s["flows_completed"], s["flows"], s["sim_end_ps"] / 1e6, s["pfc_pauses"],
              s["drops"], s["events_executed"], s["wall_s"]), ""]
with open(report, "w") as f:
    f.write("\n".join(lines))
print("\n".join(lines))


def outputs(name):
    """flows.csv and summary.json of a run, without wall-clock fields."""
    with open(os.path.join(out, name, "flows.csv")) as f:
        flows = f.read()
    s = {k: v for k, v in summary(name).items() if "wall" not in k}
    return flows, s


if check:
    for name in ("uniform", "frontier1"):
        try:
            same = outputs(name) == outputs(name + "-rerun")
        except OSError:
            same = False
        require(same, "%s: a rerun did not reproduce its flows and summary" % name)
    for c in failures:
        print("run.sh: check failed: %s" % c, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("run.sh: check passed", file=sys.stderr)
PY
