"""Report of validation/piper/run.sh: reads the runs' outputs, writes report.md.

Arguments: OUT REPORT CHECK(0|1) MICRO_GCDS CELLS (NODES:BUFFER_MB:CC ...) NODES
"""
import csv
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import Runs, finish  # noqa: E402 (validation/harness.py)

out, report, check = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
micro = [int(x) for x in sys.argv[4].split()]
cells = [(int(c.split(":")[0]), int(c.split(":")[1]), c.split(":")[2]) for c in sys.argv[5].split()]
grid_nodes = [int(x) for x in sys.argv[6].split()] if len(sys.argv) > 6 else []
failures = []
NIC = 25e9  # bytes/s per NIC (200 Gb/s); 2 GCDs share one
PAYLOAD = 4096 / (4096 + 62)  # MTU payload over frame bytes
EFF = 0.76  # the preset's wh::Dragonfly::FabricEfficiency
MICRO_BYTES = 64_000_000
WINDOW = 8  # wh::Workload::RcclWindow (default)
GCDS = 8  # per node
GROUP_NODES = 128  # nodes per group of the preset
TIERS = ["nic", "fabric", "local"]
ALGS = ["halo", "direct", "rccl"]
RUN_LIMIT_S = 30 * 60  # the longest a validation run may take


runs = Runs(out, failures)
rows, clean = runs.rows, runs.clean


def tiers(name):
    """Per tier from links.csv: bytes, mean and largest busy fraction over active ports."""
    t = {}
    for r in rows(name, "links.csv"):
        if int(r["frames"]) == 0:
            continue
        e = t.setdefault(r["tier"], {"bytes": 0, "busy": []})
        e["bytes"] += int(r["bytes"])
        e["busy"].append(float(r["busy_fraction"]))
    return {k: (v["bytes"], sum(v["busy"]) / len(v["busy"]), max(v["busy"])) for k, v in t.items()}


def flows(name):
    """OUT/NAME/flows.csv, streamed: (src, dst, bytes, start_ps, finish_ps) per flow
    (a flat all-to-all on 256 nodes has 4.2 M of them)."""
    with open(os.path.join(out, name, "flows.csv")) as f:
        r = csv.reader(f)
        h = next(r)
        i = [h.index(k) for k in ["src", "dst", "bytes", "start_ps", "finish_ps"]]
        for row in r:
            yield tuple(int(row[k]) for k in i)


def flat_conservation(name, n, size):
    """Checks one message of ceil(size / n) bytes per ordered pair; returns the most
    messages one rank sends."""
    chunk = (size + n - 1) // n
    seen = bytearray(n * n)
    sent = [0] * n
    count = dup = bad = 0
    for src, dst, b, _, _ in flows(name):
        count += 1
        dup += seen[src * n + dst]
        seen[src * n + dst] = 1
        bad += b != chunk
        sent[src] += 1
    if count != n * (n - 1) or dup or bad:
        failures.append("%s: %d messages, %d to a pair already sent to (want %d, one per pair), "
                        "%d not of %d bytes" % (name, count, dup, n * (n - 1), bad, chunk))
    return max(sent)


def halo_phases(name, n, size):
    """Checks HALO's conservation and order; returns its phase timings (ps)."""
    fl = sorted(rows(name, "flows.csv"), key=lambda f: int(f["key"].split(".")[1]))
    node = lambda h: int(h) // GCDS
    first2 = next(i for i, f in enumerate(fl) if node(f["src"]) != node(f["dst"]))
    p1 = fl[:first2]
    p2 = [f for f in fl[first2:] if node(f["src"]) != node(f["dst"])]
    p3 = [f for f in fl[first2:] if node(f["src"]) == node(f["dst"])]
    chunk = (size + n - 1) // n
    got = [0] * n
    for f in fl:
        got[int(f["dst"])] += int(f["bytes"])
    for f in p3:
        got[int(f["src"])] -= int(f["bytes"])
    wrong = [r for r in range(n) if got[r] != (n - 1) * chunk]
    if wrong:
        failures.append("%s: %d GCDs not delivered their column sum %d (GCD %d got %d)" % (
            name, len(wrong), (n - 1) * chunk, wrong[0], got[wrong[0]]))
    arrived = {}
    for f in p2:
        d = int(f["dst"])
        arrived[d] = max(arrived.get(d, 0), int(f["finish_ps"]))
    early = [f for f in p3 if int(f["start_ps"]) < arrived.get(int(f["src"]), 0)]
    if early:
        failures.append("%s: %d Phase III messages start before their Phase II data arrived" % (
            name, len(early)))
    t = lambda fs, k, agg: agg(int(f[k]) for f in fs)
    if p1 and t(p2, "start_ps", min) >= t(p1, "finish_ps", max):
        failures.append("%s: Phase I does not overlap Phase II" % name)
    issue = [0] * n  # Phase I and II messages per rank, issued together
    relay = [0] * n  # Phase III messages per relay
    for f in p1 + p2:
        issue[int(f["src"])] += 1
    for f in p3:
        relay[int(f["src"])] += 1
    sent = [a + b for a, b in zip(issue, relay)]
    return {"p1_end": t(p1, "finish_ps", max) if p1 else 0, "p2_end": t(p2, "finish_ps", max),
            "p3_start": t(p3, "start_ps", min) if p3 else 0,
            "p3_end": t(p3, "finish_ps", max) if p3 else 0,
            "path": max(issue) + max(relay), "msgs": max(sent)}


def rss(name):
    """The run's peak resident memory in bytes (run.sh measures it with /usr/bin/time),
    or None."""
    try:
        with open(os.path.join(out, name + ".rss")) as f:
            return int(f.read().split()[-1]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def groups(nodes):
    return (nodes + GROUP_NODES - 1) // GROUP_NODES


lines = ["# All-to-all on the Frontier preset, after Piper", "",
         "Generated by `validation/piper/run.sh`: every run is a scenario on "
         "`<topology preset=\"frontier\">` written by the script, one group of 128 nodes up "
         "to 128 nodes and two groups for 256 (DCQCN unless stated, PFC on, contiguous "
         "placement: rank r on GCD r mod 8 of node r / 8). Each message pays "
         "wh::Workload::MessageAlpha, which a rank pays one message after another (LogP's "
         "sender overhead: k messages ready together leave at alpha, 2 alpha, ..., k alpha; "
         "docs/workloads.md). Source of the "
         "expectations: S. Dash and F. Wang, \"Piper: Efficient Large-Scale MoE Training via "
         "Resource Modeling and Pipelined Hybrid Parallelism\", ORNL, arXiv:2605.05049 (2026), "
         "as summarised in [docs/piper.md](../../docs/piper.md). Buffers are decimal "
         "(1 MB = 10^6 bytes); each pair gets ceil(buffer / n) bytes.", ""]

# --- micro-benchmark -------------------------------------------------------------------
lines += ["## Micro-benchmark: direct all-to-all, 64 MB per GCD", "",
          "Per-GCD bandwidth: the bytes a GCD sends to the others (buffer x (n-1)/n) over the "
          "all-to-all's time. NIC bound: each GCD's off-node bytes through its half of a "
          "25 GB/s NIC (payload only).", "",
          "| GCDs | nodes | time | per-GCD bandwidth | NIC bound | wall |",
          "|---:|---:|---:|---:|---:|---:|"]
bw = {}
walls = []
for n in micro:
    s = clean("micro-%d" % n)
    flat_conservation("micro-%d" % n, n, MICRO_BYTES)
    t = s["iteration_time_ps"] * 1e-12
    bw[n] = MICRO_BYTES * (n - 1) / n / t
    bound = "-"
    if n > GCDS:
        off = MICRO_BYTES * (n - GCDS) / n
        bound = "%.1f GB/s" % (MICRO_BYTES * (n - 1) / n / (2 * off / (NIC * PAYLOAD)) / 1e9)
    walls.append(s["wall_s"])
    lines.append("| %d | %d | %.1f us | %.1f GB/s | %s | %.2f s |" % (
        n, max(1, n // GCDS), t * 1e6, bw[n] / 1e9, bound, s["wall_s"]))
if 8 in bw and 16 in bw:
    r = bw[8] / bw[16]
    lines += ["", "Across the node boundary (8 -> 16 GCDs) the per-GCD bandwidth falls by "
              "**%.2fx** (%.1f -> %.1f GB/s)." % (r, bw[8] / 1e9, bw[16] / 1e9), "",
              "| | inside a node | between nodes | ratio |", "|---|---:|---:|---:|",
              "| hardware, per link | Infinity Fabric 50-200 GB/s | NIC 25 GB/s | 2-8x |",
              "| preset, per link | %.0f-%.0f GB/s (FabricEfficiency %.2f) | 25 GB/s | %.1f-%.1fx |" % (
                  50 * EFF, 200 * EFF, EFF, 50 * EFF / 25, 200 * EFF / 25),
              "| preset, per GCD | its fabric links | 12.5 GB/s (half a NIC) | - |",
              "| simulated all-to-all, per GCD | %.1f GB/s (8 GCDs) | %.1f GB/s (16 GCDs) | %.2fx |" % (
                  bw[8] / 1e9, bw[16] / 1e9, r), "",
              "Piper reports a sharp drop in all-to-all bandwidth once the micro-benchmark "
              "(2-64 GCDs) crosses the node boundary; the text gives no value for it, so the "
              "simulated drop is set beside the links' ratio only. Beyond 16 GCDs every "
              "GCD's bandwidth stays at its NIC bound: the off-node share (n-8)/n grows "
              "towards 1 and the per-GCD figure falls towards 12.5 GB/s.", ""]

# --- HALO against flat -----------------------------------------------------------------
lines += ["## HALO against flat all-to-alls", "",
          "`halo` (three phases, docs/workloads.md#halo; a rank issues its Phase II messages, "
          "then its Phase I ones), `direct` (every message ready at once) and `rccl` "
          "(pairwise order, at most %d sends of a rank in flight), each message paying "
          "wh::Workload::MessageAlpha on its rank's issue engine, one after another; "
          "congestion control DCQCN, and HPCC in the rows that say so. Paper: about even "
          "inside one switch group (4 nodes), HALO ahead (1.2-9x RCCL's bandwidth at 16-512 "
          "nodes) once traffic crosses switches, with RCCL's per-message cost (alpha > 0). "
          "Agreement is judged on halo/flat time: within 0.9-1.1 on one switch; below 1 "
          "across switches with alpha > 0; alpha = 0 across switches has no paper figure "
          "(RCCL always pays its launch cost)." % WINDOW, "",
          "| nodes | groups | buffer | alpha | cc | halo | direct | rccl | halo/direct | halo/rccl | "
          "paper | agrees | wall (halo, direct, rccl) |",
          "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|"]
evidence = []
wall_of = {}  # (nodes, buf, cc) -> wall of its 6 runs
mem = []  # (flows, peak resident bytes) of flat direct runs
for nodes, buf, cc in cells:
    n = nodes * GCDS
    size = buf * 1_000_000
    for alpha in [0, 10]:
        base = "%d-%dMB-a%d-%s" % (nodes, buf, alpha, cc)
        s, tt, tr, msgs = {}, {}, {}, {}
        for alg in ALGS:
            name = "a2a-%s-%s" % (alg, base)
            s[alg] = clean(name)
            tt[alg] = s[alg]["iteration_time_ps"] * 1e-12
            if alg != "halo":
                msgs[alg] = flat_conservation(name, n, size)
            tr[alg] = tiers(name)
            walls.append(s[alg]["wall_s"])
            wall_of[(nodes, buf, cc)] = wall_of.get((nodes, buf, cc), 0) + s[alg]["wall_s"]
            if alg == "direct" and rss(name):
                mem.append((n * (n - 1), rss(name)))
        ph = halo_phases("a2a-halo-" + base, n, size)
        msgs["halo"] = ph["msgs"]
        path = {"halo": ph["path"], "direct": n - 1, "rccl": n - 1}
        if nodes <= 4:
            paper, agree = "about even", {a: 0.9 <= tt["halo"] / tt[a] <= 1.1 for a in ["direct", "rccl"]}
        elif alpha > 0:
            paper, agree = "HALO ahead", {a: tt["halo"] < tt[a] for a in ["direct", "rccl"]}
        else:
            paper, agree = "no figure", {a: None for a in ["direct", "rccl"]}
        verdict = ", ".join("%s: %s" % (a, "-" if v is None else "yes" if v else "**no**")
                            for a, v in agree.items())
        lines.append("| %d | %d | %d MB | %d us | %s | %.1f us | %.1f us | %.1f us | %.2f | %.2f | %s | "
                     "%s | %.2f, %.2f, %.2f s |" % (
                         nodes, groups(nodes), buf, alpha, cc.upper(), tt["halo"] * 1e6,
                         tt["direct"] * 1e6, tt["rccl"] * 1e6, tt["halo"] / tt["direct"],
                         tt["halo"] / tt["rccl"], paper, verdict,
                         s["halo"]["wall_s"], s["direct"]["wall_s"], s["rccl"]["wall_s"]))
        evidence.append((nodes, buf, alpha, cc, n, tt, tr, ph, agree, msgs, path))


def label(e):
    return "%dn/%dMB/%dus/%s" % (e[0], e[1], e[2], e[3].upper())


def ratios(es, a):
    return ", ".join("%s %.2f" % (label(e), e[5]["halo"] / e[5][a]) for e in es) or "-"


# a summary of the verdicts, counted from the table above
across = [e for e in evidence if e[0] > 4 and e[2] > 0]
across0 = [e for e in evidence if e[0] > 4 and e[2] == 0]
inside = [e for e in evidence if e[0] <= 4]
count = lambda es, a, f: sum(1 for e in es if f(e[5]["halo"] / e[5][a]))
lines += ["", "Across switches with alpha = 10 us, HALO is ahead of rccl in %d of %d cells and "
          "ahead of direct in %d of %d. On one switch it is within 10%% of direct in %d of %d "
          "cells and of rccl in %d of %d. Ratios are halo/flat time per cell "
          "(nodes/buffer/alpha/cc; below 1: HALO ahead):" % (
              count(across, "rccl", lambda r: r < 1), len(across),
              count(across, "direct", lambda r: r < 1), len(across),
              count(inside, "direct", lambda r: 0.9 <= r <= 1.1), len(inside),
              count(inside, "rccl", lambda r: 0.9 <= r <= 1.1), len(inside)), "",
          "- across switches, alpha 10 us, halo/rccl: " + ratios(across, "rccl"),
          "- across switches, alpha 10 us, halo/direct: " + ratios(across, "direct"),
          "- across switches, alpha 0, halo/rccl: " + ratios(across0, "rccl"),
          "- across switches, alpha 0, halo/direct: " + ratios(across0, "direct"),
          "- one switch, halo/rccl: " + ratios(inside, "rccl"),
          "- one switch, halo/direct: " + ratios(inside, "direct"),
          ""]
one0 = [e for e in evidence if e[2] == 0 and groups(e[0]) == 1]
win0 = [e for e in one0 if e[5]["halo"] < e[5]["direct"]]
# issue-bound cells: direct's serial issue ((n-1) alpha) longer than its alpha-0 time
t0 = {(e[0], e[1], e[3]): e[5]["direct"] for e in evidence if e[2] == 0}
bound = {True: [0, 0], False: [0, 0]}
for e in across:
    key = (e[0], e[1], e[3])
    if key in t0:
        b = bound[(e[4] - 1) * e[2] * 1e-6 > t0[key]]
        b[0] += e[5]["halo"] < e[5]["direct"]
        b[1] += 1
lines += ["Across switches with alpha = 10 us, direct is issue-bound (its (n-1) alphas take "
          "longer than its time at alpha 0) in %d cells: HALO is ahead of it in %d of them; "
          "it is bandwidth-bound in %d cells: HALO is ahead in %d." % (
              bound[True][1], bound[True][0], bound[False][1], bound[False][0]), "",
          "What decides each cell (the evidence below shows it cell by cell): (1) alpha is "
          "paid by each rank one message after another, so a flat all-to-all of n GCDs "
          "spends (n-1) alphas issuing its messages however wide its window, while HALO "
          "issues a rank's Phase II messages (one per other node) and Phase I messages "
          "(its node's other GCDs), then each relay its Phase III messages: where the flat "
          "issue time exceeds the transfer time, HALO's aggregation wins; (2) HALO's Phase "
          "III waits for the last Phase II message into its relay and then moves the "
          "forwarded bytes over Infinity Fabric a second time, while the NICs, the "
          "bottleneck of every flat run on one group, idle: where there is little alpha to "
          "save (alpha 0, or buffers whose transfer time dwarfs the issue time) this costs "
          "HALO its lead. At alpha 0 on one group HALO is ahead of direct in %d of %d cells "
          "(%s); there direct's NICs are busy less of its run than HALO's (its n-1 "
          "concurrent messages per GCD congest)." % (
              len(win0), len(one0), ", ".join("%s: nic busy %.2f direct, %.2f halo" % (
                  label(e), e[6]["direct"]["nic"][1], e[6]["halo"]["nic"][1]) for e in win0)
              or "none")]

two = [e for e in evidence if groups(e[0]) > 1]


def global_bound(name):
    """The time the global links need for their bytes spread evenly over all of them."""
    g = [r for r in rows(name, "links.csv") if r["tier"] == "global"]
    return sum(int(r["bytes"]) for r in g) * 8 / sum(int(r["rate_bps"]) for r in g)


if two:
    lines += ["", "On %s nodes the job spans two groups of the preset, which joins a pair of "
              "groups by 4 global links (wh::Dragonfly::GlobalLinksPerPair, 25 GB/s each way): "
              "half of every GCD's bytes cross them, and a 2-group machine has no third group "
              "for a non-minimal detour, as the full Frontier has. Time against the global-link "
              "time (their bytes, headers and acknowledgements included, over their total rate) and their largest "
              "busy fraction: %s. An algorithm that is not issue-bound is held by the global "
              "links there, and how evenly its messages spread over the 4 parallel links "
              "(flow-count routing: one link busy all the run while others idle) sets how far "
              "above the global-link time it ends; the flat all-to-alls at alpha 10 us are issue-bound "
              "(n-1 alphas per GCD). The paper's multi-group runs had the rest of the machine "
              "to spread over." % (
                  ", ".join(sorted({str(e[0]) for e in two})),
                  "; ".join("%s %s %.1f ms / %.1f ms, busy %.2f" % (
                      label(e), a, e[5][a] * 1e3,
                      global_bound("a2a-%s-%d-%dMB-a%d-%s" % (a, e[0], e[1], e[2], e[3])) * 1e3,
                      e[6][a]["global"][2]) for e in two for a in ALGS if "global" in e[6][a]))]

lines += ["", "### Evidence per cell", "",
          "For every cell: per-tier link load from `links.csv` (bytes over the tier's "
          "ports, and the mean / largest busy fraction of its active ports over the run), "
          "the alpha breakdown (messages the busiest rank sends x alpha: its serial issue "
          "time; and the alphas on the critical path: n-1 for direct and rccl, whose ranks "
          "issue every message one after another; for HALO the most Phase I + II messages "
          "of a rank plus the most Phase III messages of a relay) and HALO's phase times. A "
          "cell whose verdict is **no** names the reason drawn from these figures.", "",
          "| cell | alg | time | nic GB (busy mean/max) | fabric GB (busy mean/max) | "
          "local GB (busy mean/max) | global GB (busy mean/max) | msgs/rank x alpha | "
          "alphas on path | why (disagreement) |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]


def tier_text(tr, k):
    if k not in tr:
        return "-"
    b, mean, mx = tr[k]
    return "%.2f (%.2f/%.2f)" % (b / 1e9, mean, mx)


t_at = {(e[0], e[1], e[2], e[3]): e[5] for e in evidence}
for nodes, buf, alpha, cc, n, tt, tr, ph, agree, msgs, path in evidence:
    cell = "%d nodes, %d MB, %d us, %s" % (nodes, buf, alpha, cc.upper())
    why = ""
    if any(v is False for v in agree.values()):
        have = all(k in tr[a] for a in tr for k in ["nic", "fabric"])
        if not have:
            failures.append("%s: disagrees with the paper and its link loads are missing" % cell)
        p2 = ph["p2_end"] * 1e-6
        p3 = (ph["p3_end"] - ph["p2_end"]) * 1e-6
        parts = ["HALO's last Phase II message arrives at %.1f us and Phase III (relays "
                 "forwarding over the fabric) ends %.1f us later" % (p2, p3),
                 "nic busy %.2f (halo) vs %.2f (direct), %.2f (rccl)" % (
                     tr["halo"]["nic"][1], tr["direct"]["nic"][1], tr["rccl"]["nic"][1]),
                 "HALO moves %.1fx the fabric bytes of direct" % (
                     tr["halo"]["fabric"][0] / tr["direct"]["fabric"][0])]
        if "global" in tr["halo"]:
            parts.append("the %d global links between the groups: largest busy %.2f (halo), "
                         "%.2f (direct), %.2f (rccl), mean %.2f (halo)" % (
                             sum(1 for r in rows("a2a-halo-%d-%dMB-a%d-%s" % (nodes, buf, alpha, cc),
                                                 "links.csv") if r["tier"] == "global") // 2,
                             tr["halo"]["global"][2], tr["direct"]["global"][2],
                             tr["rccl"]["global"][2], tr["halo"]["global"][1]))
        if alpha:
            parts.append("alphas on the path: halo %d x %d us = %d us, direct and rccl %d x = %d us" % (
                path["halo"], alpha, path["halo"] * alpha, path["direct"], path["direct"] * alpha))
        z = t_at.get((nodes, buf, 0, cc))  # the same cell at alpha 0
        for a, v in agree.items():
            if v is not False:
                continue
            d = (tt["halo"] - tt[a]) * 1e6
            if not alpha:
                parts.append("behind %s by %.1f us: no alpha to save, and Phase III's %.1f us "
                             "follow the last Phase II arrival" % (a, d, p3))
            elif z:
                cost = {k: (tt[k] - z[k]) * 1e6 for k in ["halo", a]}
                parts.append("%s %s by %.1f us: alpha 10 us adds %.1f us to %s (its serial issue "
                             "overlaps its transfers) and %.1f us to HALO, against HALO's %.1f us "
                             "%s at alpha 0" % (
                                 "behind" if d > 0 else "ahead of", a, abs(d), cost[a], a,
                                 cost["halo"], abs(z["halo"] - z[a]) * 1e6,
                                 "deficit" if z["halo"] > z[a] else "lead"))
        why = "; ".join(parts)
    for alg in ALGS:
        lines.append("| %s | %s | %.1f us | %s | %s | %s | %s | %d x %d us = %d us | %d (%d us) | %s |" % (
            cell, alg, tt[alg] * 1e6, tier_text(tr[alg], "nic"), tier_text(tr[alg], "fabric"),
            tier_text(tr[alg], "local"), tier_text(tr[alg], "global"), msgs[alg], alpha,
            msgs[alg] * alpha, path[alg],
            path[alg] * alpha, why if alg == "halo" else ""))

# --- cells not run -----------------------------------------------------------------------
# The full grid: every node count of the run and 512 (four groups), 1, 16 and 128 MB,
# DCQCN and HPCC. A cell left out gets an estimate of its 6 runs' wall time: the same
# node count's largest buffer run scaled by the bytes (buffer ratio); without one, the
# largest node count run with that buffer scaled by the flows ((nodes ratio)^2).
ran = {(c[0], c[1], c[2]) for c in cells}
missing = [(nd, b, cc) for nd in sorted(set(grid_nodes) | {512}) for b in [1, 16, 128]
           for cc in ["dcqcn", "hpcc"] if (nd, b, cc) not in ran]


def estimate(nd, b):
    """The wall time of a cell's 6 runs, scaled from the nearest cell that ran: the same
    node count's largest buffer by bytes (b / b0), else the largest node count below by
    flows and bytes ((nd / n0)^2 x b / b0, its largest buffer up to b)."""
    same = [(k[1], w) for k, w in wall_of.items() if k[0] == nd]
    if same:
        b0, w = max(same)
        return w * b / b0, "%d nodes at %d MB x %g" % (nd, b0, b / b0)
    below = [(k[0], k[1], w) for k, w in wall_of.items() if k[0] < nd and k[1] <= b]
    if below:
        n0, b0, w = max(below)
        f = (nd / n0) ** 2 * b / b0
        return w * f, "%d nodes at %d MB x %g" % (n0, b0, f)
    return None, "no run to scale"


if missing:
    lines += ["", "### Cells not run", "",
              "Cells of the full grid (nodes x 1, 16, 128 MB x DCQCN, HPCC, each 3 algorithms x "
              "2 alphas = 6 runs) left out of this run, with an estimate of their wall time on "
              "this machine (2 cores) scaled from the runs above: a run may take at most 30 "
              "minutes, and the whole script is kept under an hour.", "",
              "| nodes | buffer | cc | estimated wall of its 6 runs | from | why left out |",
              "|---:|---:|---|---:|---|---|"]
    for nd, b, cc in missing:
        w, frm = estimate(nd, b)
        if w is None:
            why = "no run to scale from"
        elif w / 6 > RUN_LIMIT_S:
            why = "a run over 30 minutes"
        else:
            why = "the script's total time"
        if nd == 512:
            why += "; memory, see below"
        lines.append("| %d | %d MB | %s | %s | %s | %s |" % (
            nd, b, cc.upper(), "-" if w is None else "%.0f s" % w, frm, why))

# --- memory: bytes per flow, and 512 nodes ----------------------------------------------
peak = {}
for f, m in mem:
    peak[f] = max(peak.get(f, 0), m)
mem = sorted(peak.items())
if len(mem) >= 2:
    (f0, m0), (f1, m1) = mem[-2], mem[-1]  # the two largest flat all-to-alls
    per = (m1 - m0) / (f1 - f0)
    f512 = 4096 * 4095
    need = m1 + per * (f512 - f1)
    lines += ["", "### Memory", "",
              "Peak resident memory of the direct runs (/usr/bin/time, the larger of the two "
              "alphas): %s. Between %d and %d flows it grows by **%.0f bytes per flow** (the "
              "flow record, its transport and congestion-control state, the workload's "
              "transfer and flow reference, and the network's growth with the node count). "
              "A flat all-to-all on 512 nodes (4 groups) has 4096 x 4095 = %.1f M flows: "
              "about %.1f GB, against %.0f GB of memory on this machine; its estimated wall "
              "times are in the table above." % (
                  ", ".join("%.2f GB at %d flows" % (m / 1e9, f) for f, m in mem[-3:]),
                  f0, f1, per, f512 / 1e6, need / 1e9, os.sysconf("SC_PAGE_SIZE") *
                  os.sysconf("SC_PHYS_PAGES") / 1e9)]

# --- plots -------------------------------------------------------------------------------
here = os.path.dirname(os.path.abspath(report))
gp = shutil.which("gnuplot")
plots = []
if gp:
    term = "set terminal svg noenhanced size 900,600 font 'sans,11'\n"
    with open(os.path.join(out, "micro.dat"), "w") as f:
        for n in micro:
            f.write("%d %.4f\n" % (n, bw[n] / 1e9))
    script = term + ("set output 'piper-micro.svg'\nset title 'direct all-to-all, 64 MB per GCD'\n"
                     "set xlabel 'GCDs'\nset ylabel 'per-GCD bandwidth (GB/s)'\nset logscale x 2\n"
                     "set grid\nset key top right\nset arrow from first 12, graph 0 to first 12, graph 1 nohead dt 2\n"
                     "set label 'node boundary' at first 12, graph 0.95 right offset -1,0\n"
                     "plot '%s' using 1:2 with linespoints lw 2 pt 7 title 'simulated',"
                     " 12.5 * 4096 / 4158 with lines dt 3 title 'half a NIC (12.5 GB/s payload)'\n"
                     % os.path.join(out, "micro.dat"))
    series = []
    for cc in sorted({e[3] for e in evidence}):
        for b in sorted({e[1] for e in evidence}):
            for alpha in [0, 10]:
                es = sorted((e for e in evidence if e[1] == b and e[2] == alpha and e[3] == cc),
                            key=lambda e: e[0])
                if len(es) < 2:
                    continue
                dat = os.path.join(out, "ratio-%d-%d-%s.dat" % (b, alpha, cc))
                with open(dat, "w") as f:
                    for e in es:
                        f.write("%d %.4f %.4f\n" % (e[0], e[5]["halo"] / e[5]["direct"],
                                                    e[5]["halo"] / e[5]["rccl"]))
                colour = {1: "#1f77b4", 16: "#ff7f0e", 128: "#d62728"}.get(b, "black")
                series.append((dat, "%d MB, alpha %d us, %s" % (b, alpha, cc.upper()),
                               "dt %d lc rgb '%s'" % (1 if alpha else 2, colour),
                               "lw 2 pt 7" if cc == "dcqcn" else "lw 1 pt 6"))
    ratio = term.replace("900,600", "1200,760") + (
        "set output 'piper-halo-flat.svg'\nset multiplot layout 1,2 title "
        "'HALO against flat all-to-alls: halo / flat time (below 1: HALO ahead)'\n"
        "set logscale x 2\nset logscale y 2\nset grid\nset xlabel 'nodes'\n"
        "set key below horizontal maxrows 4 font ',8'\n")
    for col, flat in [(2, "direct"), (3, "rccl")]:
        ratio += "set title 'halo / %s'\nset ylabel 'time ratio'\nplot 1 with lines lc 'black' notitle, " % flat
        ratio += ", ".join("'%s' using 1:%d with linespoints %s %s title '%s'" % (
            d, col, dt, lw, t) for d, t, dt, lw in series) + "\n"
    ratio += "unset multiplot\n"
    for name, text in [("piper-micro.svg", script), ("piper-halo-flat.svg", ratio)]:
        path_gp = os.path.join(out, name + ".gp")
        with open(path_gp, "w") as f:
            f.write(text)
        if subprocess.run([gp, path_gp], cwd=here, stderr=subprocess.DEVNULL).returncode == 0:
            plots.append(name)
lines += ["", "### Plots", ""]
if plots:
    lines += ["![%s](%s)" % (p, p) for p in plots]
    lines += ["", "`piper-micro.svg`: the micro-benchmark's per-GCD bandwidth against GCDs. "
              "`piper-halo-flat.svg`: halo/direct (left) and halo/rccl (right) time against "
              "nodes, one line per buffer (colour), alpha (solid 10 us, dashed 0) and "
              "congestion control (thick with filled points DCQCN, thin with open points HPCC)."]
else:
    lines += ["No plots: gnuplot is not on the PATH (Debian: gnuplot-nox)."]

# --- determinism -----------------------------------------------------------------------
if cells:
    first = "a2a-halo-%d-%dMB-a10-%s" % cells[0]
    with open(os.path.join(out, first, "flows.csv")) as a, open(os.path.join(out, "repeat", "flows.csv")) as b:
        same = a.read() == b.read()
    if not same:
        failures.append("%s: a repeated run's flows.csv differs" % first)
    lines += ["", "Determinism: `%s` run twice, flows.csv %s." % (
        first, "identical" if same else "DIFFERENT")]

lines += ["", "Wall time of all %d runs: %.0f s (each run's is listed above)." % (len(walls), sum(walls)), ""]
finish(lines, report, check, failures, "All checks met.")
