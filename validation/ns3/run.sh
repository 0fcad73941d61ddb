#!/usr/bin/env bash
# Native-vs-ns-3 validation of wormhole-sim.
#
#   validation/ns3/run.sh [--check] [--no-run]
#
# Runs every scenario in validation/ns3/ (*.xml) on both engines: the native engine
# (heap scheduler) and stock ns-3 3.37 (`whsim run --engine ns3`). For each scenario
# it compares the per-flow flow completion times (FCTs) and writes
# validation/ns3/report.md, which it also prints:
#
#   - per flow: native FCT, ns-3 FCT, relative difference (ns-3 - native) / native;
#   - the relative difference of the mean FCT and the largest per-flow |difference|;
#   - the same against ns-3 with --ns3-marking dequeue (a C hook queue disc marks at
#     dequeue, as the native engine does, instead of ns-3's RED at enqueue): a
#     measurement of how much of the difference the marking point makes;
#   - events executed and link traversals of each engine;
#   - wall time of each engine's simulation loop (summary.json wall_s, the fastest and
#     the median of WH_NS3_REPEAT runs of each engine, which must give identical flows)
#     and the native speedup, ns-3 / native, from the fastest runs (on a shared machine
#     noise only adds time, and a run of a few milliseconds swings by a third);
#   - a noise floor: each engine rerun with every link delay (wh::Link::Delay) 2.5%
#     and 5% longer; the largest per-flow FCT change of an engine against itself says
#     how sensitive the scenario's per-flow FCTs are to a change that should not
#     matter (deterministic DCTCP sharing is chaotic); informational, except in a
#     per-scenario bound built on it;
#   - a verdict against the acceptance bounds: mean FCT within 5%, every flow
#     within 15%, except where a scenario has its own per-flow bound, which the
#     report names (FLOW_BOUNDS below; incast-8to1: the sum of the two engines' noise
#     floors, when larger than 15%).
#
# Scenarios whose file name starts with "diag-" are diagnostics: they reproduce a
# known difference between the engines and are reported apart from the acceptance set.
#
# Without --check it reports only: a missed bound does not fail the script; a failing
# whsim run does (exit status 1, after every scenario has been tried).
#
# Options:
#   --check   also exit with status 1 if a scenario of the acceptance set misses a
#             bound (verdict FAIL), if a run of a scenario is missing, or if the
#             repeated runs of an engine disagree on any scenario (diagnostics
#             included); each failure is printed as a line "run.sh: check failed: ...",
#             else "run.sh: check passed"
#   --no-run  run no simulation: analyse the outputs an earlier run left in
#             $WH_BUILD/validation-ns3 (to re-check or re-render a report)
#
# Environment:
#   WH_BUILD               build directory, relative to the source tree (default: build)
#   WH_NS3_REPEAT          runs per scenario and engine, for the wall time (default: 3)
#   WH_NS3_NOISE           0 skips the noise-floor runs (default: 1)
#   WH_NS3_SCENARIOS       space-separated scenario names (file names without .xml) to
#                          run instead of all of them
#   WH_REPORT              where to write the report (default: validation/ns3/report.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../options.sh
source "$here/../options.sh"
parse_options "${BASH_SOURCE[0]}" "$@"
root=$(cd "$here/../.." && pwd)
cd "$root"
build=${WH_BUILD:-build}
whsim="$build/whsim"
repeat=${WH_NS3_REPEAT:-3}
noise=${WH_NS3_NOISE:-1}
outroot="$build/validation-ns3"
report=${WH_REPORT:-$here/report.md}
delay_factors=(1.025 1.05)

if [ "$norun" = 0 ] && [ ! -x "$whsim" ]; then
  echo "run.sh: $whsim not found; build first (make build)" >&2
  exit 1
fi
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is required" >&2
  exit 1
fi

if [ -n "${WH_NS3_SCENARIOS:-}" ]; then
  read -r -a names <<<"$WH_NS3_SCENARIOS"
else
  names=()
  for f in "$here"/*.xml; do
    n=$(basename "$f" .xml)
    case $n in diag-*) ;; *) names+=("$n") ;; esac
  done
  for f in "$here"/diag-*.xml; do
    [ -e "$f" ] && names+=("$(basename "$f" .xml)")
  done
fi

failed=0
# run_whsim OUT_DIR ARGS...: one whsim run, its messages kept in OUT_DIR.log.
run_whsim() {
  local out=$1
  shift
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  if ! "$whsim" run "$@" --out "$out" --quiet >"$out.log" 2>&1; then
    echo "run.sh: FAILED: $whsim run $* --out $out" >&2
    sed 's/^/  /' "$out.log" >&2
    failed=1
    return 1
  fi
}

# The scenario's wh::Link::Delay in picoseconds (its <set>, else the default 1us).
link_delay_ps() {
  python3 - "$1" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
units = {"ps": 1, "ns": 10**3, "us": 10**6, "ms": 10**9, "s": 10**12}
v = "1us"
for s in ET.parse(sys.argv[1]).getroot().iter("set"):
    if s.get("param") == "wh::Link::Delay":
        v = s.get("value")
m = re.fullmatch(r"([0-9.]+)\s*(ps|ns|us|ms|s)", v)
print(int(round(float(m.group(1)) * units[m.group(2)])))
EOF
}

for name in "${names[@]}"; do
  [ "$norun" = 0 ] || break
  scen="$here/$name.xml"
  out="$outroot/$name"
  if [ ! -f "$scen" ]; then
    echo "run.sh: no scenario $scen" >&2
    failed=1
    continue
  fi
  rm -rf "$out"
  for i in $(seq 1 "$repeat"); do
    echo "run.sh: $name: native and ns-3, run $i of $repeat ..." >&2
    run_whsim "$out/native-$i" "$scen" --scheduler heap || true
    run_whsim "$out/ns3-$i" "$scen" --engine ns3 || true
  done
  echo "run.sh: $name: ns-3 with dequeue marking ..." >&2
  run_whsim "$out/ns3-dequeue" "$scen" --engine ns3 --ns3-marking dequeue || true
  if [ "$noise" != 0 ]; then
    base=$(link_delay_ps "$scen")
    for fct in "${delay_factors[@]}"; do
      d=$(python3 -c "print(round($base * $fct))")
      echo "run.sh: $name: noise floor, link delay x$fct (${d}ps) ..." >&2
      run_whsim "$out/native-delay-x$fct" "$scen" --scheduler heap \
        --set "wh::Link::Delay=${d}ps" || true
      run_whsim "$out/ns3-delay-x$fct" "$scen" --engine ns3 --set "wh::Link::Delay=${d}ps" ||
        true
    done
  fi
done

status=0
python3 - "$here" "$outroot" "$report" "$repeat" "$noise" "${delay_factors[*]}" "$check" \
  "${names[@]}" <<'EOF' || status=$?
import csv, json, os, platform, statistics, sys, time
import xml.etree.ElementTree as ET

here, outroot, report, repeat, noise, factors, check = sys.argv[1:8]
names = sys.argv[8:]
repeat = int(repeat)
noise = noise != "0"
factors = factors.split()
check = check == "1"
MEAN_BOUND, FLOW_BOUND = 0.05, 0.15
# Per-scenario per-flow bounds, each documented in README.md and named in the report.
# "noise": the sum of the two engines' noise floors when larger than FLOW_BOUND (each
# engine's per-flow FCTs move by up to its floor under a change that should not
# matter, so two such outcomes may differ by the sum); FLOW_BOUND without noise runs.
FLOW_BOUNDS = {"incast-8to1": "noise"}
check_failures = []


def load(d):
    """(summary, flows in file order) of one run, or None if it is missing."""
    try:
        with open(os.path.join(d, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(d, "flows.csv")) as f:
            flows = list(csv.DictReader(f))
        return summary, flows
    except OSError:
        return None


def fct(row):
    return int(row["fct_ps"]) if row["fct_ps"] else None


def max_change(a, b):
    """Largest per-flow |FCT(b) - FCT(a)| / FCT(a) over flows completed in both."""
    best = 0.0
    for x, y in zip(a, b):
        if fct(x) and fct(y):
            best = max(best, abs(fct(y) - fct(x)) / fct(x))
    return best


def pct(x, signed=True):
    return ("%+.2f%%" if signed else "%.2f%%") % (100 * x)


def us(ps):
    return "%.3f" % (ps / 1e6)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


results, sections = [], []
for name in names:
    d = os.path.join(outroot, name)
    scen = os.path.join(here, name + ".xml")
    try:
        root = ET.parse(scen).getroot()
        desc = " ".join((root.findtext("description") or "").split())
    except (OSError, ET.ParseError):
        desc = "(no readable scenario file)"
    natives = [r for r in (load(os.path.join(d, "native-%d" % i)) for i in range(1, repeat + 1)) if r]
    ns3s = [r for r in (load(os.path.join(d, "ns3-%d" % i)) for i in range(1, repeat + 1)) if r]
    if len(natives) < repeat or len(ns3s) < repeat:
        check_failures.append("%s: %d native and %d ns-3 runs of %d found" % (
            name, len(natives), len(ns3s), repeat))
    ns3 = ns3s[0] if ns3s else None
    diag = name.startswith("diag-")
    sec = ["### %s%s" % (name, " (diagnostic)" if diag else ""), "", desc, ""]
    if not natives or ns3 is None:
        sec += ["**Run failed** (see the logs under `%s`)." % os.path.relpath(d), ""]
        results.append(dict(name=name, diag=diag, failed=True))
        check_failures.append("%s: no complete run to compare" % name)
        sections.append("\n".join(sec))
        continue
    nsum, nflows = natives[0]
    ssum, sflows = ns3
    deq = load(os.path.join(d, "ns3-dequeue"))
    dflows = deq[1] if deq else [{"fct_ps": ""}] * len(nflows)
    deterministic = all(r[1] == nflows for r in natives) and all(r[1] == sflows for r in ns3s)
    nwall = min(r[0]["wall_s"] for r in natives)
    swall = min(r[0]["wall_s"] for r in ns3s)
    nmed = statistics.median(r[0]["wall_s"] for r in natives)
    smed = statistics.median(r[0]["wall_s"] for r in ns3s)
    floor = {}
    if noise:
        for eng, base in (("native", nflows), ("ns3", sflows)):
            ch = [max_change(base, r[1]) for r in
                  (load(os.path.join(d, "%s-delay-x%s" % (eng, f))) for f in factors) if r]
            floor[eng] = max(ch) if ch else None
    flow_bound, bound_note = FLOW_BOUND, ""
    if FLOW_BOUNDS.get(name) == "noise":
        if floor.get("native") is not None and floor.get("ns3") is not None:
            flow_bound = max(FLOW_BOUND, floor["native"] + floor["ns3"])
        bound_note = (" This scenario's per-flow bound is its own: the sum of the two engines' "
                      "noise floors when larger than 15%%, here %s (README.md, difference 8)."
                      % pct(flow_bound, False))
    rows, diffs, incomplete = [], [], 0
    sec += ["| flow | src -> dst | bytes | native FCT (us) | ns-3 FCT (us) | difference | ns-3, dequeue marking: difference |",
            "|---|---|---:|---:|---:|---:|---:|"]
    ddiffs = []
    for a, b, c in zip(nflows, sflows, dflows):
        fa, fb, fc = fct(a), fct(b), fct(c)
        if fa and fc:
            ddiffs.append((fc - fa) / fa)
        dcell = pct((fc - fa) / fa) if fa and fc else "-"

        if fa and fb:
            diff = (fb - fa) / fa
            diffs.append(diff)
            cell = pct(diff) + (" **(> %s)**" % pct(flow_bound, False) if abs(diff) > flow_bound else "")
        else:
            incomplete += 1
            cell = "not completed"
        sec.append("| %s | %s -> %s | %s | %s | %s | %s | %s |" % (
            a["flow_id"], a["src"], a["dst"], a["bytes"], us(fa) if fa else "-",
            us(fb) if fb else "-", cell, dcell))
    done = [(fct(a), fct(b)) for a, b in zip(nflows, sflows) if fct(a) and fct(b)]
    mean_n = sum(x for x, _ in done) / len(done) if done else 0
    mean_s = sum(y for _, y in done) / len(done) if done else 0
    mean_diff = (mean_s - mean_n) / mean_n if mean_n else 0.0
    max_diff = max((abs(x) for x in diffs), default=0.0)
    outside = sum(1 for x in diffs if abs(x) > flow_bound)
    dmean = None
    if deq and all(fct(c) for c in dflows) and mean_n:
        dmean = (sum(fct(c) for c in dflows) / len(dflows) - mean_n) / mean_n
    dmax = max((abs(x) for x in ddiffs), default=None)
    sec.append("| **mean** | | | %s | %s | %s | %s |" % (us(mean_n), us(mean_s), pct(mean_diff),
                                                      pct(dmean) if dmean is not None else "-"))
    sec.append("")
    sec += ["| | native | ns-3 |", "|---|---:|---:|",
            "| events executed | %d | %d |" % (nsum["events_executed"], ssum["events_executed"]),
            "| link traversals | %d | %d |" % (nsum["link_traversals"], ssum["link_traversals"]),
            "| simulated time (us) | %s | %s |" % (us(nsum["sim_end_ps"]), us(ssum["sim_end_ps"])),
            "| wall time of the simulation loop (s), fastest of %d / %d runs | %.4f | %.4f |" % (len(natives), len(ns3s), nwall, swall),
            "| wall time of the simulation loop (s), median | %.4f | %.4f |" % (nmed, smed)]
    if noise:
        sec.append("| noise floor: largest per-flow FCT change, link delays x%s | %s | %s |" % (
            " and x".join(factors),
            pct(floor["native"], False) if floor.get("native") is not None else "-",
            pct(floor["ns3"], False) if floor.get("ns3") is not None else "-"))
    speedup = swall / nwall if nwall > 0 else float("inf")
    mean_ok = abs(mean_diff) <= MEAN_BOUND and incomplete == 0
    flows_ok = outside == 0 and incomplete == 0
    verdict = "PASS" if mean_ok and flows_ok else "FAIL"
    sec += ["", "Mean FCT difference %s (bound 5%%: %s); largest per-flow difference %s "
            "(bound %s: %s%s); native speedup %.0fx.%s%s" % (
                pct(mean_diff), "met" if mean_ok else "missed", pct(max_diff, False),
                pct(flow_bound, False), "met" if flows_ok else "missed",
                "" if flows_ok else ", %d of %d flows outside" % (outside + incomplete, len(nflows)),
                speedup, bound_note,
                "" if deterministic else " **Repeated runs of one engine disagreed with each other.**"),
            "", "**Verdict: %s**" % verdict, ""]
    if not deterministic:
        check_failures.append("%s: repeated runs of one engine disagreed" % name)
    if verdict == "FAIL" and not diag:
        check_failures.append("%s: verdict FAIL (mean %s, bound 5%%: %s; largest per-flow %s, "
                              "bound %s: %s)" % (name, pct(mean_diff), "met" if mean_ok else "missed",
                                                 pct(max_diff, False), pct(flow_bound, False),
                                                 "met" if flows_ok else "missed"))
    results.append(dict(name=name, diag=diag, failed=False, flows=len(nflows), mean=mean_diff,
                        max=max_diff, outside=outside + incomplete, floor=floor, nwall=nwall,
                        swall=swall, speedup=speedup, verdict=verdict, dmean=dmean, dmax=dmax,
                        ev=(nsum["events_executed"], ssum["events_executed"]),
                        lt=(nsum["link_traversals"], ssum["link_traversals"])))
    sections.append("\n".join(sec))


def dequeue_table(rs):
    t = ["| scenario | mean FCT diff | max per-flow diff | within both bounds |",
         "|---|---:|---:|---|"]
    for r in rs:
        if r["failed"] or r.get("dmean") is None:
            t.append("| %s | | | run failed |" % r["name"])
            continue
        ok = abs(r["dmean"]) <= MEAN_BOUND and r["dmax"] <= FLOW_BOUND
        t.append("| %s | %s | %s | %s |" % (r["name"], pct(r["dmean"]), pct(r["dmax"], False),
                                           "yes" if ok else "no"))
    return t


def summary_table(rs):
    t = ["| scenario | flows | mean FCT diff | max per-flow diff | flows outside the per-flow bound | noise floor native / ns-3 | native wall (s) | ns-3 wall (s) | speedup | verdict |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rs:
        if r["failed"]:
            t.append("| %s | | | | | | | | | run failed |" % r["name"])
            continue
        fl = r["floor"]
        nf = " / ".join(pct(fl[e], False) if fl.get(e) is not None else "-" for e in ("native", "ns3")) if fl else "-"
        t.append("| %s | %d | %s | %s | %d | %s | %.4f | %.3f | %.0fx | %s |" % (
            r["name"], r["flows"], pct(r["mean"]), pct(r["max"], False), r["outside"], nf,
            r["nwall"], r["swall"], r["speedup"], r["verdict"]))
    return t


acc = [r for r in results if not r["diag"]]
dia = [r for r in results if r["diag"]]
out = ["# Native engine vs ns-3 3.37: validation report", "",
       "Generated by `validation/ns3/run.sh` on %s (%s, %d CPUs). Each scenario ran on the "
       "native engine (heap scheduler) and on stock ns-3 3.37 through `whsim run --engine ns3`. "
       "Differences are (ns-3 - native) / native. Acceptance bounds: mean FCT within 5%%, every "
       "flow within 15%% (or within the scenario's own per-flow bound where its section names one). Wall times are each engine's simulation loop (`wall_s`), the fastest of "
       "%d runs of each engine in this run of the script (noise only adds time; the medians are in each scenario's section); speedup = ns-3 wall / native wall. The noise floor is the largest per-flow FCT "
       "change of each engine against itself when every link delay is made %s times longer: per-flow "
       "differences between the engines below it are within what the scenario's own sensitivity "
       "allows. The analysis of the differences (from README.md) follows the per-scenario sections." % (time.strftime("%Y-%m-%d"), cpu_model(), os.cpu_count() or 0, repeat,
                    " or ".join(factors)), "",
       "## Summary", ""] + summary_table(acc) + [""]
if dia:
    out += ["Diagnostic scenarios (known differences, not in the acceptance set):", ""] + summary_table(dia) + [""]
out += ["ns-3 with `--ns3-marking dequeue` (every port's data band is a hook queue disc whose C "
        "callback marks at dequeue, as the native engine does; ns-3's TCP unchanged), against the "
        "same native runs:", ""] + dequeue_table(acc + dia) + [""]
out += ["## Scenarios", ""] + sections
# The analysis of the differences lives in README.md; the report carries a copy.
try:
    with open(os.path.join(here, "README.md")) as f:
        readme = f.read()
    start = readme.index("## Known differences")
    end = readme.find("\n## ", start + 1)
    out += ["", readme[start:end if end >= 0 else None].strip(), ""]
except (OSError, ValueError):
    pass
with open(report, "w") as f:
    f.write("\n".join(out).rstrip() + "\n")
print("\n".join(out))
if check:
    for c in check_failures:
        print("run.sh: check failed: %s" % c, file=sys.stderr)
    if check_failures:
        sys.exit(1)
    print("run.sh: check passed", file=sys.stderr)
EOF

if [ "$failed" -ne 0 ]; then
  echo "run.sh: some runs failed (see above)" >&2
  exit 1
fi
exit "$status"
