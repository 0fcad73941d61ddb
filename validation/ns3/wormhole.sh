#!/usr/bin/env bash
# Wormhole's steady-state monitor on ns-3 (observe only): writes and prints
# validation/ns3/wormhole-report.md.
#
#   validation/ns3/wormhole.sh [--check] [--no-run]
#
# On the five ns-3 validation scenarios (dumbbell-2, -4, -8, fattree-k4-permutation,
# incast-8to1):
#
# 1. Monitoring changes nothing: each scenario on ns-3 without and with
#    --ns3-wormhole observe, with ns-3's RED marking and with the dequeue hook marking;
#    flows.csv and summary.json (events included; wall_s aside) must be byte-identical.
# 2. Accounting: in each observed run, every flow's delivered payload counted by the
#    monitor (wormhole-ns3.json, ns3_flows) equals its size in flows.csv.
# 3. Overhead: ns-3 wall time (summary.json wall_s) stock, on the heap scheduler, and
#    with the monitor (on the heap), best of WH_NS3_WH_REPEAT runs each (default 5);
#    bound: at most 10% more than stock.
# 4. Steadiness: DCTCP's steady fraction (window evaluations with dR below theta) for
#    theta 5, 20, 50%, l 100 and 1000, tau 1 us and 100 us, on ns-3 (the monitor) and
#    on the native engine in observe mode, each sampling cwnd over smoothed RTT (the
#    DCTCP default) and, in other runs, the delivered rate; one run per (quantity, l,
#    tau): the 5% and 20% fractions come from the report's dR statistics, 50% from the
#    run's theta.
#
# --check exits 1 when 1, 2 or 3 fails (each failure printed as "wormhole.sh: check
# failed: ..."); --no-run re-renders the report from $WH_BUILD/validation-ns3-wormhole.
#
# Environment: WH_BUILD (default build), WH_NS3_WH_REPEAT (default 5), WH_NS3_SCENARIOS
# (scenario names to run instead of all five), WH_REPORT (default
# validation/ns3/wormhole-report.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
WH_REPORT=${WH_REPORT:-$here/wormhole-report.md}
harness_setup "${BASH_SOURCE[0]}" ns3-wormhole
repeat=${WH_NS3_WH_REPEAT:-5}
scenarios=${WH_NS3_SCENARIOS:-"dumbbell-2 dumbbell-4 dumbbell-8 fattree-k4-permutation incast-8to1"}

run() { # DIR ARGS...: one whsim run, its log beside its outputs
  local dir=$1
  shift
  mkdir -p "$(dirname "$dir")"
  "$whsim" run "$@" -q --out "$dir" >"$dir.log" 2>&1 || {
    echo "wormhole.sh: whsim run $* failed (see $dir.log)" >&2
    exit 1
  }
}

if [ "$norun" = 0 ]; then
  for s in $scenarios; do
    xml=$here/$s.xml
    for m in red dequeue; do
      run "$out/$s/$m-off" "$xml" --engine ns3 --ns3-marking "$m"
      run "$out/$s/$m-observe" "$xml" --engine ns3 --ns3-marking "$m" --ns3-wormhole observe
    done
    run "$out/$s/red-heap" "$xml" --engine ns3 --ns3-scheduler heap
    for i in $(seq 2 "$repeat"); do
      run "$out/$s/red-off-$i" "$xml" --engine ns3
      run "$out/$s/red-heap-$i" "$xml" --engine ns3 --ns3-scheduler heap
      run "$out/$s/red-observe-$i" "$xml" --engine ns3 --ns3-wormhole observe
    done
    for l in 100 1000; do
      for tau in 1us 100us; do
        set_args=(--set wh::Wormhole::Theta=0.5 --set "wh::Wormhole::Window=$l"
          --set "wh::Wormhole::SamplePeriod=$tau")
        for q in cwnd-rtt delivered; do
          run "$out/$s/steady-ns3-$q-$l-$tau" "$xml" --engine ns3 --ns3-wormhole observe \
            "${set_args[@]}" --set "wh::WormholeStudy::Quantity=$q"
          run "$out/$s/steady-native-$q-$l-$tau" "$xml" --set wh::Wormhole::Mode=observe \
            "${set_args[@]}" --set "wh::WormholeStudy::Quantity=$q"
        done
      done
    done
  done
fi

python3 - "$out" "$WH_REPORT" "$check" "$repeat" $scenarios <<'EOF'
import csv, json, os, sys

out, report, check, repeat = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
scenarios = sys.argv[5:]
lines, failures = [], []

def read(path):
    with open(path) as f:
        return f.read()

def strip_wall(text):
    return "".join(l for l in text.splitlines(True) if '"wall_s"' not in l)

def wall(d):
    return json.loads(read(os.path.join(d, "summary.json")))["wall_s"]

lines += ["# Wormhole's steady-state monitor on ns-3", "",
          "Written by `validation/ns3/wormhole.sh` (see its header for the method).", "",
          "## Monitoring changes nothing; accounting", "",
          "| scenario | marking | flows.csv | summary.json | events | flows | bytes counted exactly |",
          "|---|---|---|---|---|---|---|"]
for s in scenarios:
    for m in ("red", "dequeue"):
        off, on = os.path.join(out, s, m + "-off"), os.path.join(out, s, m + "-observe")
        same_csv = read(os.path.join(off, "flows.csv")) == read(os.path.join(on, "flows.csv"))
        same_sum = strip_wall(read(os.path.join(off, "summary.json"))) == \
            strip_wall(read(os.path.join(on, "summary.json")))
        events = json.loads(read(os.path.join(on, "summary.json")))["events_executed"]
        sizes = {}
        with open(os.path.join(on, "flows.csv")) as f:
            for i, row in enumerate(csv.DictReader(f)):  # flow i has port 10000 + i
                sizes[i] = int(row["bytes"])
        rep = json.loads(read(os.path.join(on, "wormhole-ns3.json")))
        cols = rep["ns3_flows"]["columns"]
        got = {r[cols.index("dport")] - 10000: r[cols.index("delivered_bytes")]
               for r in rep["ns3_flows"]["rows"]}
        exact = sum(1 for i, b in sizes.items() if got.get(i) == b)
        lines.append(f"| {s} | {m} | {'identical' if same_csv else 'DIFFERENT'} | "
                     f"{'identical' if same_sum else 'DIFFERENT'} | {events} | {len(sizes)} | "
                     f"{exact} of {len(sizes)} |")
        if not (same_csv and same_sum):
            failures.append(f"{s} {m}: outputs differ with the monitor")
        if exact != len(sizes):
            failures.append(f"{s} {m}: {len(sizes) - exact} flows not counted exactly")

lines += ["", f"## Overhead (ns-3 wall_s, best of {repeat})", "",
          "Stock ns-3 (MapScheduler), ns-3 on the project's heap without the monitor, and "
          "with the monitor (which runs on the heap). The bound (10%) is checked against "
          "stock ns-3; the runs alternate, so load on the machine hits all three alike.", "",
          "| scenario | stock (s) | heap (s) | heap + monitor (s) | vs stock | vs heap |",
          "|---|---|---|---|---|---|"]
for s in scenarios:
    def best(kind):
        dirs = [os.path.join(out, s, f"red-{kind}")] + \
            [os.path.join(out, s, f"red-{kind}-{i}") for i in range(2, repeat + 1)]
        return min(wall(d) for d in dirs)
    a, h, b = best("off"), best("heap"), best("observe")
    lines.append(f"| {s} | {a:.3f} | {h:.3f} | {b:.3f} | {100 * (b / a - 1):+.1f}% | "
                 f"{100 * (b / h - 1):+.1f}% |")
    if b > 1.10 * a:
        failures.append(f"{s}: the monitor adds {100 * (b / a - 1):.1f}% (bound 10%)")

lines += ["", "## Steady fractions (DCTCP)", "",
          "Fraction of window evaluations with dR below theta (`dr.steady_fraction` for 5% "
          "and 20%, `steady_fraction_theta` at theta = 50%); `n` is the number of "
          "evaluations. Both engines sample cwnd over smoothed RTT (the DCTCP default) "
          "and, in separate runs, the delivered rate per period.", "",
          "| scenario | l | tau | engine | n | 5% | 20% | 50% |", "|---|---|---|---|---|---|---|---|"]
for s in scenarios:
    for l in (100, 1000):
        for tau in ("1us", "100us"):
            for name, d in (("ns-3 (cwnd-rtt)", f"steady-ns3-cwnd-rtt-{l}-{tau}"),
                            ("native (cwnd-rtt)", f"steady-native-cwnd-rtt-{l}-{tau}"),
                            ("ns-3 (delivered)", f"steady-ns3-delivered-{l}-{tau}"),
                            ("native (delivered)", f"steady-native-delivered-{l}-{tau}")):
                base = os.path.join(out, s, d)
                f = "wormhole-ns3.json" if d.startswith("steady-ns3") else "wormhole.json"
                rep = json.loads(read(os.path.join(base, f)))
                dr = rep["dr"]
                n = dr["evaluations"]
                def frac(v):
                    return f"{v:.3f}" if n else "-"
                lines.append(f"| {s} | {l} | {tau} | {name} | {n} | "
                             f"{frac(dr['steady_fraction']['0.05'])} | "
                             f"{frac(dr['steady_fraction']['0.20'])} | "
                             f"{frac(rep['steady_fraction_theta'])} |")

# engine differences larger than 2x (either way; a zero against a non-zero counts),
# with both engines' median dR, for the explanation in validation/ns3/README.md
lines += ["", "## Engine differences larger than 2x", "",
          "| scenario | l | tau | quantity | theta | ns-3 | native | median dR ns-3 | "
          "median dR native |", "|---|---|---|---|---|---|---|---|---|"]
for s in scenarios:
    for l in (100, 1000):
        for tau in ("1us", "100us"):
            for q in ("cwnd-rtt", "delivered"):
                a = json.loads(read(os.path.join(out, s, f"steady-ns3-{q}-{l}-{tau}",
                                                 "wormhole-ns3.json")))
                b = json.loads(read(os.path.join(out, s, f"steady-native-{q}-{l}-{tau}",
                                                 "wormhole.json")))
                if not a["dr"]["evaluations"] or not b["dr"]["evaluations"]:
                    continue
                for theta in ("5%", "20%", "50%"):
                    def frac(r):
                        if theta == "50%":
                            return r["steady_fraction_theta"]
                        return r["dr"]["steady_fraction"]["0.05" if theta == "5%" else "0.20"]
                    x, y = frac(a), frac(b)
                    if max(x, y) > 0 and (min(x, y) == 0 or max(x, y) / min(x, y) > 2):
                        lines.append(f"| {s} | {l} | {tau} | {q} | {theta} | {x:.3f} | {y:.3f} | "
                                     f"{a['dr']['median']} | {b['dr']['median']} |")

text = "\n".join(lines) + "\n"
with open(report, "w") as f:
    f.write(text)
print(text)
for msg in failures:
    print("wormhole.sh: check failed: " + msg)
if check:
    print("wormhole.sh: check " + ("failed" if failures else "passed"))
    sys.exit(1 if failures else 0)
EOF
