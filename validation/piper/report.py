"""Report of validation/piper/run.sh, in three steps over a results file (results.csv,
one row per run, kept between invocations so that grid cells add up over several):

  report.py plan RESULTS BUDGET_S           the cells to run by default, one a line
  report.py store OUT RESULTS CELL ENGINE RUN [REPEAT]
                                            analyses CELL's runs in OUT (CELL: micro,
                                            or NODES:BUFFER_MB:CC), stores them in
                                            RESULTS if every check passes, else writes
                                            the failures to OUT/failed-CELL.txt
  report.py alphas [RESULTS CELL]           the alphas (us) each cell runs, 0, the
                                            measured one and 10; with CELL, those it is
                                            stored at with all three algorithms
  report.py fingerprint-cells RESULTS       the fingerprint cells stored with at least
                                            the 6 runs of alpha 0 and 10, one a line
  report.py fingerprint OUT RESULTS ENGINES ENGINE RUN CELL...
                                            compares the CELLs' runs in OUT, field by
                                            simulated field, with their stored rows
                                            (left as they are) and records in ENGINES,
                                            per engine of the stored rows, whether
                                            ENGINE reproduces it
  report.py render RESULTS ENGINES REPORT CHECK(0|1) ENGINE OUT RAN(0|1)
                                            writes REPORT from RESULTS and ENGINES alone
                                            (and, RAN, the failures OUT/failed-*.txt of
                                            this invocation); the plots' data go to OUT

A malformed RESULTS or ENGINES is refused with its file, line and field, exit status 2.
"""
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import Runs, finish  # noqa: E402 (validation/harness.py)

NIC = 25e9  # bytes/s per NIC (200 Gb/s); 2 GCDs share one
PAYLOAD = 4096 / (4096 + 62)  # MTU payload over frame bytes
EFF = 0.76  # the preset's wh::Dragonfly::FabricEfficiency
MICRO_BYTES = 64_000_000
MICRO = [2, 4, 8, 16, 32, 64]  # GCDs of the micro-benchmark
WINDOW = 13  # wh::Workload::RcclWindow of the Frontier preset (RcclSchedule=batch)
GCDS = 8  # per node
GROUP_NODES = 128  # nodes per group of the preset
TIERS = ["nic", "fabric", "local", "global"]
ALGS = ["halo", "direct", "rccl"]
BRACKET = [0, 10]  # us: the bracket of wh::Workload::MessageAlpha every cell runs


def alpha_value(text):
    """An alpha in microseconds from its text: an int when whole (0, 10), else a float
    (0.76); ValueError if it is not a finite non-negative number."""
    v = float(text)
    if not math.isfinite(v) or v < 0:
        raise ValueError(text)
    return int(v) if v == int(v) else v


def alpha_text(a):
    """The alpha's text in results.csv, run names and the report: 0, 0.76, 10."""
    return "%g" % a


def us(x):
    """A product of alphas in us, as text: 11.4, 20470."""
    return "%g" % round(x, 3)


def measured_alpha():
    """The measured MessageAlpha (us) run.sh passes in PIPER_MEASURED_ALPHA_US (run.sh
    defines it once, from validation/frontier/report.md)."""
    text = os.environ.get("PIPER_MEASURED_ALPHA_US", "")
    try:
        a = alpha_value(text)
    except ValueError:
        a = None
    if a is None or a in BRACKET:
        print("run.sh: PIPER_MEASURED_ALPHA_US='%s' is not an alpha in us other than %s "
              "(run.sh sets it)" % (text, " and ".join(map(alpha_text, BRACKET))), file=sys.stderr)
        sys.exit(2)
    return a


MEASURED = measured_alpha()
ALPHAS = sorted(BRACKET + [MEASURED])  # each cell's alphas: the bracket and the measured one
GRID_NODES = [4, 16, 32, 64, 128, 256, 512]
GRID_BUFFERS = [1, 16, 128]
GRID_CC = ["dcqcn", "hpcc"]
RUN_LIMIT_S = 30 * 60  # the longest a validation run may take
CHECKS = ["clean", "conservation", "order", "repeat"]
FIELDS = (["cell", "gcds", "alg", "alpha_us", "time_ps", "flows", "events", "msgs", "path",
           "p1_end_ps", "p2_end_ps", "p3_start_ps", "p3_end_ps"]
          + ["%s_%s" % (t, k) for t in TIERS for k in ["bytes", "busy_mean", "busy_max"]]
          + ["global_links", "global_time_ps"] + CHECKS + ["engine", "run", "wall_s", "rss_kb"])
INT_FIELDS = {"gcds", "time_ps", "flows", "events", "msgs", "path", "p1_end_ps", "p2_end_ps",
              "p3_start_ps", "p3_end_ps", "global_links", "global_time_ps"}
CELL_RE = re.compile(r"^(micro|[0-9]+:[0-9]+:(dcqcn|hpcc))$")
FINGERPRINT = ["16:16:dcqcn", "16:16:hpcc"]  # run.sh's fingerprint cells
# what a run computes, compared by the fingerprint: all but the cell's key, the repeat
# verdict (run once per invocation) and what the machine or the invocation sets
KEY = ["cell", "alg", "alpha_us"]
SIMULATED = [k for k in FIELDS if k not in KEY + ["repeat", "engine", "run", "wall_s", "rss_kb"]]
ENGINE_FIELDS = ["engine", "reproduces", "verdict", "cells", "runs", "run"]
ENGINE_RE = re.compile(r"^([0-9a-f]{4,40}(\+modified)?|unknown)$")


def cell_key(c):
    """'NODES:BUFFER:CC' -> (NODES, BUFFER, CC)."""
    n, b, cc = c.split(":")
    return int(n), int(b), cc


def cell_name(k):
    return "%d:%d:%s" % k


def groups(nodes):
    """Groups of the machine a cell runs on (run.sh's groups_for): what the job fills, at
    least 4 from 256 nodes on."""
    g = (nodes + GROUP_NODES - 1) // GROUP_NODES
    return max(g, 4) if nodes >= 256 else g


def run_name(k, alg, alpha):
    return "a2a-%s-%d-%dMB-a%s-%s" % (alg, k[0], k[1], alpha_text(alpha), k[2])


# --- the results file ------------------------------------------------------------------
def refuse(path, line, msg):
    print("run.sh: %s:%d: %s" % (path, line, msg), file=sys.stderr)
    sys.exit(2)


def read(path, fields):
    """(line, row as a dict) of the CSV file PATH with the header FIELDS (none if it
    does not exist), each row of as many fields."""
    if not os.path.exists(path):
        return
    with open(path, newline="") as f:
        r = csv.reader(f)
        if next(r, None) != fields:
            refuse(path, 1, "header is not the %d fields %s" % (len(fields), ",".join(fields)))
        for row in r:
            if len(row) != len(fields):
                refuse(path, r.line_num, "%d fields, want %d" % (len(row), len(fields)))
            yield r.line_num, dict(zip(fields, row))


def write(path, fields, rows):
    """Writes the FIELDS of ROWS (lists of strings) to PATH through a temporary file."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(fields)
        w.writerows(rows)
    os.replace(tmp, path)


def load(path):
    """The rows of RESULTS (none if it does not exist), each field checked."""
    got = []
    for line, d in read(path, FIELDS):
        if not CELL_RE.match(d["cell"]):
            refuse(path, line, "field cell: '%s' is neither micro nor NODES:BUFFER:CC" % d["cell"])
        if d["alg"] not in ALGS:
            refuse(path, line, "field alg: '%s' is not one of %s" % (d["alg"], ", ".join(ALGS)))
        for k in FIELDS:
            v = d[k]
            try:
                if k in INT_FIELDS:
                    d[k] = int(v)
                    if d[k] < 0:
                        raise ValueError
                elif k == "alpha_us":
                    d[k] = None if v == "-" else alpha_value(v)
                    if d[k] is not None and alpha_text(d[k]) != v:
                        raise ValueError
                elif k.endswith("_bytes") or k == "rss_kb":
                    d[k] = None if v == "" else int(v)
                elif k.endswith("_busy_mean") or k.endswith("_busy_max") or k == "wall_s":
                    d[k] = None if v == "" else float(v)
                elif k in CHECKS and v not in ["ok", "fail", "-"]:
                    raise ValueError
            except ValueError:
                refuse(path, line, "field %s: '%s' is not a valid value" % (k, v))
        got.append(d)
    return got


def order(d):
    """Rows in a fixed order: the micro-benchmark, then cells by cc, nodes, buffer."""
    if d["cell"] == "micro":
        return (0, "", 0, 0, d["gcds"], 0, 0)
    n, b, cc = cell_key(d["cell"])
    return (1, cc, n, b, d["alpha_us"], ALGS.index(d["alg"]), 0)


def fmt(d, k):
    v = d[k]
    if v is None:
        return "-" if k == "alpha_us" else ""
    if k == "alpha_us":
        return alpha_text(v)
    if k.endswith("_busy_mean") or k.endswith("_busy_max"):
        return "%.6f" % v
    if k == "wall_s":
        return "%.2f" % v
    return str(v)


def save(path, rows):
    """Writes ROWS to PATH in their fixed order, through a temporary file."""
    write(path, FIELDS, [[fmt(d, k) for k in FIELDS] for d in sorted(rows, key=order)])


# --- the engines file: which engine reproduces which on the fingerprint cells ------------
def load_engines(path):
    """The records of ENGINES (none if it does not exist), each field checked."""
    got = []
    for line, d in read(path, ENGINE_FIELDS):
        for k in ["engine", "reproduces"]:
            if not ENGINE_RE.match(d[k]):
                refuse(path, line, "field %s: '%s' is not an engine" % (k, d[k]))
        if d["verdict"] != "equal" and not d["verdict"].startswith("differs: "):
            refuse(path, line, "field verdict: '%s' is neither equal nor differs: ..." % d["verdict"])
        cells = d["cells"].split(" ")
        if not all(CELL_RE.match(c) and c != "micro" for c in cells):
            refuse(path, line, "field cells: '%s' is not NODES:BUFFER:CC cells separated by spaces"
                   % d["cells"])
        try:
            d["runs"] = int(d["runs"])
            if d["runs"] <= 0:
                raise ValueError
        except ValueError:
            refuse(path, line, "field runs: '%s' is not a valid value" % d["runs"])
        got.append(d)
    return got


def save_engines(path, recs):
    """Writes the records in a fixed order (invocation, engine, engine reproduced)."""
    write(path, ENGINE_FIELDS, [[str(d[k]) for k in ENGINE_FIELDS] for d in sorted(
        recs, key=lambda d: (d["run"], d["engine"], d["reproduces"]))])


def stored_alphas(got):
    """The alphas of ALPHAS at which GOT ((alg, alpha) -> row) holds all three
    algorithms."""
    return [a for a in ALPHAS if all((alg, a) in got for alg in ALGS)]


def complete(rows, cell):
    """CELL's stored rows by (alg, alpha), or None if any of its runs (3 algorithms at
    each of ALPHAS) is missing."""
    got = {(d["alg"], d["alpha_us"]): d for d in rows if d["cell"] == cell}
    return got if stored_alphas(got) == ALPHAS else None


def bracketed(rows, cell):
    """CELL's stored rows by (alg, alpha) if it holds at least the runs of the bracket
    (a cell of an engine before the measured alpha has these 6 only), else None."""
    got = {(d["alg"], d["alpha_us"]): d for d in rows if d["cell"] == cell}
    return got if set(BRACKET) <= set(stored_alphas(got)) else None


def fingerprint_cells(results):
    """The fingerprint cells stored with at least the bracket's runs."""
    rows = load(results)
    for c in FINGERPRINT:
        if bracketed(rows, c):
            print(c)


def alphas(results, cell):
    """The alphas run.sh runs, on one line; with CELL, those at which it is stored with
    all three algorithms (what its fingerprint rerun compares)."""
    got = ALPHAS
    if cell:
        got = stored_alphas(bracketed(load(results), cell) or {})
    print(" ".join(alpha_text(a) for a in got))


def fingerprint(out, results, engines, engine, run, cells):
    """Compares the CELLs' runs in OUT with their stored rows (which stay as they are);
    per engine E of the stored rows, replaces the record (ENGINE, E) in ENGINES: equal,
    or the first differing field."""
    rows = load(results)
    a = Analysis(out)
    per = {}  # (stored engine, CC) -> [cells, runs, first difference or None]
    for cell in cells:
        old = bracketed(rows, cell)
        if not old:
            print("run.sh: %s: fingerprint cell %s has not the 6 runs of alpha %s stored" % (
                results, cell, " and ".join(map(alpha_text, BRACKET))), file=sys.stderr)
            sys.exit(2)
        k = cell_key(cell)
        for alpha in stored_alphas(old):
            for alg in ALGS:
                s = old[(alg, alpha)]
                d = a.run(run_name(k, alg, alpha), cell, k[0] * GCDS, alg, alpha, k[1] * 1_000_000)
                e = per.setdefault((s["engine"], k[2]), [[], 0, None])
                if cell not in e[0]:
                    e[0].append(cell)
                e[1] += 1
                diff = next((f for f in SIMULATED if fmt(s, f) != fmt(d, f)), None)
                if diff and e[2] is None:
                    e[2] = "differs: %s %s alpha %s %s: stored %s, new %s" % (
                        cell, alg, alpha_text(alpha), diff, fmt(s, diff) or "(empty)", fmt(d, diff) or "(empty)")
    recs = load_engines(engines)
    for (old_engine, cc), (cs, n, diff) in sorted(per.items()):
        # this invocation's record of the pair for this CC replaces an earlier one
        recs = [r for r in recs if (r["engine"], r["reproduces"]) != (engine, old_engine)
                or rec_ccs(r) != {cc}]
        recs.append({"engine": engine, "reproduces": old_engine, "verdict": diff or "equal",
                     "cells": " ".join(cs), "runs": n, "run": run})
        if diff:
            print("run.sh: engine %s does not reproduce engine %s on the fingerprint cells %s: %s"
                  % (engine, old_engine, ", ".join(cs), diff[len("differs: "):]), file=sys.stderr)
        else:
            print("run.sh: engine %s reproduces engine %s on the fingerprint cells %s (%d runs, "
                  "all fields equal)" % (engine, old_engine, ", ".join(cs), n), file=sys.stderr)
    save_engines(engines, recs)


def rec_ccs(r):
    """The congestion controls whose fingerprint cells the record compared."""
    return {cell_key(c)[2] for c in r["cells"].split(" ")}


def reproduced(recs, engine, cc):
    """Engine -> the chain of "equal" records that links it to ENGINE for cells of
    congestion control CC (the records that compared CC's fingerprint cells; the latest
    record of a pair decides; equality on the fingerprint runs either way), found
    breadth-first in a fixed order; ENGINE itself maps to []. Per CC, because an engine
    change may touch one CC's code alone: its cells of the other CC stay current."""
    latest = {}
    for r in sorted((r for r in recs if cc in rec_ccs(r)),
                    key=lambda r: (r["run"], r["engine"], r["reproduces"])):
        if r["engine"] != r["reproduces"]:
            latest[tuple(sorted([r["engine"], r["reproduces"]]))] = r
    edges = {}
    for r in latest.values():
        if r["verdict"] == "equal":
            edges.setdefault(r["engine"], []).append((r["reproduces"], r))
            edges.setdefault(r["reproduces"], []).append((r["engine"], r))
    chain = {engine: []}
    todo = [engine]
    while todo:
        e = todo.pop(0)
        for f, r in sorted(edges.get(e, []), key=lambda x: (x[0], x[1]["run"])):
            if f not in chain:
                chain[f] = chain[e] + [r]
                todo.append(f)
    return chain


def record_text(r):
    return "engine `%s`, reproduced by `%s` on the fingerprint cells %s (%d runs, all fields " \
           "equal; invocation %s)" % (r["reproduces"], r["engine"], ", ".join(r["cells"].split(" ")),
                                      r["runs"], r["run"])


# --- analysis of one invocation's outputs ----------------------------------------------
class Analysis:
    """The runs of one cell below OUT; what is wrong goes to self.failures."""

    def __init__(self, out):
        self.out = out
        self.failures = []
        self.runs = Runs(out, self.failures)

    def tiers(self, name):
        """Per tier from links.csv: bytes, mean and largest busy fraction over active
        ports; and the global links' count and the time they need for their bytes
        spread evenly over all of them."""
        t, gbytes, grate, glinks = {}, 0, 0, 0
        for r in self.runs.rows(name, "links.csv"):
            if r["tier"] == "global":
                gbytes += int(r["bytes"])
                grate += int(r["rate_bps"])
                glinks += 1
            if int(r["frames"]) == 0:
                continue
            e = t.setdefault(r["tier"], {"bytes": 0, "busy": []})
            e["bytes"] += int(r["bytes"])
            e["busy"].append(float(r["busy_fraction"]))
        d = {}
        for k in TIERS:
            v = t.get(k)
            d[k + "_bytes"] = v["bytes"] if v else None
            d[k + "_busy_mean"] = round(sum(v["busy"]) / len(v["busy"]), 6) if v else None
            d[k + "_busy_max"] = max(v["busy"]) if v else None
        d["global_links"] = glinks // 2  # a link's two directions
        d["global_time_ps"] = round(gbytes * 8 / grate * 1e12) if grate else 0
        return d

    def flows(self, name):
        """OUT/NAME/flows.csv, streamed: (src, dst, bytes, start_ps, finish_ps) per flow
        (a flat all-to-all on 256 nodes has 4.2 M of them)."""
        with open(os.path.join(self.out, name, "flows.csv")) as f:
            r = csv.reader(f)
            h = next(r)
            i = [h.index(k) for k in ["src", "dst", "bytes", "start_ps", "finish_ps"]]
            for row in r:
                yield tuple(int(row[k]) for k in i)

    def flat_conservation(self, name, n, size):
        """Checks one message of ceil(size / n) bytes per ordered pair; returns the most
        messages one rank sends and the verdict."""
        chunk = (size + n - 1) // n
        seen = bytearray(n * n)
        sent = [0] * n
        count = dup = bad = 0
        for src, dst, b, _, _ in self.flows(name):
            count += 1
            dup += seen[src * n + dst]
            seen[src * n + dst] = 1
            bad += b != chunk
            sent[src] += 1
        if count != n * (n - 1) or dup or bad:
            self.failures.append("%s: %d messages, %d to a pair already sent to (want %d, one per "
                                 "pair), %d not of %d bytes" % (name, count, dup, n * (n - 1), bad, chunk))
            return max(sent), "fail"
        return max(sent), "ok"

    def halo_phases(self, name, n, size):
        """Checks HALO's conservation and order; returns its phase timings (ps), the
        alphas on its path, the most messages of a rank and the two verdicts."""
        fl = sorted(self.runs.rows(name, "flows.csv"), key=lambda f: int(f["key"].split(".")[1]))
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
        cons = "ok"
        if wrong:
            cons = "fail"
            self.failures.append("%s: %d GCDs not delivered their column sum %d (GCD %d got %d)" % (
                name, len(wrong), (n - 1) * chunk, wrong[0], got[wrong[0]]))
        arrived = {}
        for f in p2:
            d = int(f["dst"])
            arrived[d] = max(arrived.get(d, 0), int(f["finish_ps"]))
        early = [f for f in p3 if int(f["start_ps"]) < arrived.get(int(f["src"]), 0)]
        order_ok = "ok"
        if early:
            order_ok = "fail"
            self.failures.append("%s: %d Phase III messages start before their Phase II data "
                                 "arrived" % (name, len(early)))
        t = lambda fs, k, agg: agg(int(f[k]) for f in fs)
        if p1 and t(p2, "start_ps", min) >= t(p1, "finish_ps", max):
            order_ok = "fail"
            self.failures.append("%s: Phase I does not overlap Phase II" % name)
        issue = [0] * n  # Phase I and II messages per rank, issued together
        relay = [0] * n  # Phase III messages per relay
        for f in p1 + p2:
            issue[int(f["src"])] += 1
        for f in p3:
            relay[int(f["src"])] += 1
        sent = [a + b for a, b in zip(issue, relay)]
        return {"p1_end_ps": t(p1, "finish_ps", max) if p1 else 0,
                "p2_end_ps": t(p2, "finish_ps", max),
                "p3_start_ps": t(p3, "start_ps", min) if p3 else 0,
                "p3_end_ps": t(p3, "finish_ps", max) if p3 else 0,
                "path": max(issue) + max(relay), "msgs": max(sent),
                "conservation": cons, "order": order_ok}

    def rss_kb(self, name):
        """The run's peak resident memory in KB (run.sh measures it with /usr/bin/time),
        or None."""
        try:
            with open(os.path.join(self.out, name + ".rss")) as f:
                return int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            return None

    def run(self, name, cell, gcds, alg, alpha, size):
        """One run's row."""
        before = len(self.failures)
        s = self.runs.clean(name)
        d = {"cell": cell, "gcds": gcds, "alg": alg, "alpha_us": alpha,
             "time_ps": s["iteration_time_ps"], "flows": s["flows"],
             "events": s.get("events_executed", 0), "wall_s": s["wall_s"],
             "rss_kb": self.rss_kb(name), "repeat": "-",
             "p1_end_ps": 0, "p2_end_ps": 0, "p3_start_ps": 0, "p3_end_ps": 0}
        d["clean"] = "ok" if len(self.failures) == before else "fail"
        d.update(self.tiers(name))
        if alg == "halo":
            d.update(self.halo_phases(name, gcds, size))
        else:
            d["msgs"], d["conservation"] = self.flat_conservation(name, gcds, size)
            d["path"] = gcds - 1
            d["order"] = "-"
        return d


def store(out, results, cell, engine, run, repeat):
    """Analyses CELL's runs in OUT; stores them in RESULTS (replacing the cell's old
    rows) if every check passes, else writes the failures to OUT/failed-CELL.txt."""
    a = Analysis(out)
    new = []
    if cell == "micro":
        for n in MICRO:
            new.append(a.run("micro-%d" % n, cell, n, "direct", None, MICRO_BYTES))
    else:
        k = cell_key(cell)
        for alpha in ALPHAS:
            for alg in ALGS:
                new.append(a.run(run_name(k, alg, alpha), cell, k[0] * GCDS, alg, alpha,
                                 k[1] * 1_000_000))
        if repeat:
            first = run_name(k, "halo", 10)
            with open(os.path.join(out, first, "flows.csv")) as f1, \
                    open(os.path.join(out, repeat, "flows.csv")) as f2:
                same = f1.read() == f2.read()
            for d in new:
                if d["alg"] == "halo" and d["alpha_us"] == 10:
                    d["repeat"] = "ok" if same else "fail"
            if not same:
                a.failures.append("%s: a repeated run's flows.csv differs" % first)
    for d in new:
        d["engine"], d["run"] = engine, run
    failed = os.path.join(out, "failed-%s.txt" % cell.replace(":", "-"))
    if a.failures:
        with open(failed, "w") as f:
            f.write("".join("%s\n" % x for x in a.failures))
        print("run.sh: %s not stored: %d check(s) failed" % (cell, len(a.failures)), file=sys.stderr)
        return
    rows = [d for d in load(results) if d["cell"] != cell] + new
    save(results, rows)
    print("run.sh: %s stored in %s" % (cell, results), file=sys.stderr)


# --- estimates -------------------------------------------------------------------------
SWITCH_NODES = 4  # nodes per switch of the preset
PACKET = 4096  # MTU payload bytes
RATE_MIN_WALL_S = 1.0  # shorter runs are mostly start-up and clock resolution: no rate fit


def cell_walls(rows):
    """(nodes, buffer, cc) -> the summed wall of its stored runs."""
    w = {}
    for d in rows:
        if d["cell"] != "micro":
            k = cell_key(d["cell"])
            w[k] = w.get(k, 0) + d["wall_s"]
    return w


def run_flows(alg, nodes):
    """The flows of one run: n(n-1) for the flat all-to-alls (n = nodes x 8 GCDs); for
    HALO, per GCD 7 Phase I and 7 Phase III messages in its node and one Phase II
    message per other node (docs/modules/workload.md, HALO): n(nodes + 13)."""
    n = nodes * GCDS
    return n * (nodes + 13) if alg == "halo" else n * (n - 1)


def hops(nodes):
    """A path's tiers relative to one inside a node: 1 plus the shares of ordered GCD
    pairs whose path leaves the node, the switch and the group."""
    n = nodes * GCDS
    return 1 + sum((n - min(nodes, m) * GCDS) / (n - 1) for m in [1, SWITCH_NODES, GROUP_NODES])


def packets(alg, nodes, buf):
    """MTU packets of one run: a flat all-to-all's n(n-1) messages of buffer/n bytes;
    HALO's messages vary in size, so its bytes over the MTU."""
    n, b = nodes * GCDS, buf * 1_000_000
    if alg == "halo":
        return n * b / PACKET
    return run_flows(alg, nodes) * -(-(b // n) // PACKET)


def run_features(alg, nodes, buf):
    """What events scale with: flows and packets, each times the tiers it crosses."""
    h = hops(nodes)
    return run_flows(alg, nodes) * h, packets(alg, nodes, buf) * h


def fit_events(runs):
    """(per flow-tier, per packet-tier) minimising the squared relative error of the
    events of RUNS ((features, events) pairs), or None."""
    s11 = s12 = s22 = y1 = y2 = 0.0
    for (f1, f2), e in runs:
        f1, f2 = f1 / e, f2 / e
        s11, s12, s22, y1, y2 = s11 + f1 * f1, s12 + f1 * f2, s22 + f2 * f2, y1 + f1, y2 + f2
    det = s11 * s22 - s12 * s12
    if len(runs) < 2 or det <= 1e-12 * s11 * s22:
        return None
    return (y1 * s22 - y2 * s12) / det, (y2 * s11 - y1 * s12) / det


def fit_rate(points):
    """Theil-Sen line of log(events per second) on log(flows) through POINTS: the median
    of the pairwise slopes (0 when all have the same flows) and the median intercept,
    robust to the runs a busy machine slowed down; (intercept, slope) or None."""
    if not points:
        return None
    slopes = sorted((y1 - y0) / (x1 - x0) for i, (x0, y0) in enumerate(points)
                    for x1, y1 in points[i + 1:] if x1 != x0)
    s = statistics.median(slopes) if slopes else 0.0
    return statistics.median(y - s * x for x, y in points), s


def wall_model(rows):
    """The wall-time model fitted on the stored cells' runs, or None: events ~ a x flows
    x tiers + b x packets x tiers per algorithm and alpha (either cc; an alpha inside the
    bracket with too few stored runs to fit takes the larger of the bracket's
    estimates, see estimate()), and events per second ~ flows^s per algorithm (the
    larger the run, the slower each event: memory), fitted on the runs of at least
    RATE_MIN_WALL_S (all runs when none is as long)."""
    runs = [d for d in rows if d["cell"] != "micro" and d["wall_s"] and d["events"]]
    events, rate = {}, {}
    for alg in ALGS:
        for alpha in ALPHAS:
            got = [(run_features(alg, *cell_key(d["cell"])[:2]), d["events"])
                   for d in runs if d["alg"] == alg and d["alpha_us"] == alpha]
            events[(alg, alpha)] = fit_events(got)
        mine = [d for d in runs if d["alg"] == alg]
        long = [d for d in mine if d["wall_s"] >= RATE_MIN_WALL_S] or mine
        rate[alg] = fit_rate([(math.log(d["flows"]), math.log(d["events"] / d["wall_s"]))
                              for d in long])
    if any(events[(alg, a)] is None for alg in ALGS for a in BRACKET) or None in rate.values():
        return None
    return {"events": events, "rate": rate, "runs": len(runs)}


def estimate(model, nd, b):
    """The wall time of a cell's runs (3 algorithms x ALPHAS, either congestion control)
    from MODEL, wall_model(): each run's events from its flows and packets (an alpha
    with too few stored runs to fit: the larger of the bracket's), over the event rate
    of its algorithm at its flows. Returns (seconds or None, the basis, the longest
    run)."""
    if model is None:
        return None, "too few stored runs to fit", None
    walls, events = [], 0
    for alg in ALGS:
        c, s = model["rate"][alg]
        f1, f2 = run_features(alg, nd, b)
        for alpha in ALPHAS:
            fits = [model["events"][(alg, alpha)]]
            if fits[0] is None:
                fits = [model["events"][(alg, x)] for x in BRACKET]
            e = max(max(a * f1 + p * f2 for a, p in fits),
                    run_flows(alg, nd))  # a flow is an event at least
            events += e
            walls.append(e / math.exp(c + s * math.log(run_flows(alg, nd))))
    frm = "%.2g G events; fit on %d stored runs" % (events / 1e9, model["runs"])
    return sum(walls), frm, max(walls)


def memory_fit(rows):
    """(bytes per flow, (flows, peak bytes) of the largest stored direct run), fitted on
    the two largest stored flat direct runs, or None."""
    peak = {}
    for d in rows:
        if d["cell"] != "micro" and d["alg"] == "direct" and d["rss_kb"]:
            f = d["gcds"] * (d["gcds"] - 1)
            peak[f] = max(peak.get(f, 0), d["rss_kb"] * 1024)
    mem = sorted(peak.items())
    if len(mem) < 2:
        return None, mem
    (f0, m0), (f1, m1) = mem[-2], mem[-1]
    return (m1 - m0) / (f1 - f0), mem


def memory_need(per, mem, nodes):
    n = nodes * GCDS
    f1, m1 = mem[-1]
    return m1 + per * (n * (n - 1) - f1)


def physical_bytes():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def available_bytes():
    """MemAvailable of /proc/meminfo, else the physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return physical_bytes()


def grid():
    return [(n, b, cc) for n in GRID_NODES for b in GRID_BUFFERS for cc in GRID_CC]


def why_not(model, per, mem, k, avail):
    """(estimate, from, the bound it breaks or None)."""
    w, frm, one = estimate(model, k[0], k[1])
    if one is not None and one > RUN_LIMIT_S:
        return w, frm, "a run over 30 minutes (the longest about %.0f s)" % one
    if per is not None and memory_need(per, mem, k[0]) > 0.9 * avail:
        return w, frm, "memory: %.1f GB estimated, over 90%% of %.0f GB" % (
            memory_need(per, mem, k[0]) / 1e9, avail / 1e9)
    return w, frm, None


def plan(results, budget):
    """The grid cells not stored with all their runs (none, or those of the bracket only,
    without the measured alpha's) that keep within the bounds, cheapest first, as long
    as their estimated walls add up to at most BUDGET seconds; a cell of 4 nodes counts
    as 0 s while too few runs are stored to fit the wall model."""
    rows = load(results)
    model = wall_model(rows)
    per, mem = memory_fit(rows)
    avail = min(physical_bytes(), available_bytes() / 0.9)  # what is free now
    todo = []
    for k in grid():
        if complete(rows, cell_name(k)):
            continue
        w, _, bound = why_not(model, per, mem, k, avail)
        if bound:
            continue
        if w is None:
            if k[0] != GRID_NODES[0]:
                continue
            w = 0
        todo.append((w, k))
    total = 0
    for w, k in sorted(todo):
        if total + w > budget:
            break
        total += w
        print(cell_name(k))


# --- the report ------------------------------------------------------------------------
FRONTIER_REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "frontier",
                               "report.md")
FIT_RE = re.compile(r"^Fit: alpha = ([0-9]+(?:\.[0-9]+)?) us on 16 GCDs of two nodes", re.M)


def frontier_fit():
    """(alpha in us, how it was read) from validation/frontier/report.md, the rendered
    fit of its small all-to-all ("Fit: alpha = ... us on 16 GCDs of two nodes"): (None,
    "missing ...") when there is no such report, (None, "unreadable ...") when it has
    no fit line."""
    try:
        with open(FRONTIER_REPORT) as f:
            text = f.read()
    except OSError:
        return None, "missing: validation/frontier/report.md not found, the fit not compared"
    m = FIT_RE.search(text)
    if not m:
        return None, "unreadable: no line \"Fit: alpha = ... us on 16 GCDs of two nodes\""
    return alpha_value(m.group(1)), "read"


def render(results, engines, report, check, engine, out, ran):
    out = os.path.abspath(out)
    rows = load(results)
    recs = load_engines(engines)
    chains = {cc: reproduced(recs, engine, cc) for cc in ["dcqcn", "hpcc"]}
    failures = []
    if ran:
        for name in sorted(os.listdir(out)):
            if name.startswith("failed-") and name.endswith(".txt"):
                with open(os.path.join(out, name)) as f:
                    failures += [x for x in f.read().splitlines() if x]
    for d in rows:
        bad = [c for c in CHECKS if d[c] == "fail"]
        if bad:
            failures.append("stored %s %s alpha %s: check %s failed" % (
                d["cell"], d["alg"], fmt(d, "alpha_us"), ", ".join(bad)))
    micro = {d["gcds"]: d for d in rows if d["cell"] == "micro"}
    cells = {}
    extra = {}  # cell -> the alphas of its stored rows that this script does not run
    for d in rows:
        if d["cell"] != "micro":
            k = cell_key(d["cell"])
            if d["alpha_us"] in ALPHAS:
                cells.setdefault(k, {})[(d["alg"], d["alpha_us"])] = d
            else:
                extra.setdefault(k, set()).add(d["alpha_us"])
    for k in list(cells):
        missing = [(a, al) for al in BRACKET for a in ALGS if (a, al) not in cells[k]]
        if missing:
            failures.append("stored cell %s lacks its runs %s" % (cell_name(k), ", ".join(
                "%s alpha %s" % (a, alpha_text(al)) for a, al in missing)))
            del cells[k]
    order_k = sorted(cells, key=lambda k: (k[2], k[0], k[1]))
    # the alphas each cell has all three algorithms at; a cell of an engine before the
    # measured alpha has the bracket only
    at_alphas = {k: stored_alphas(cells[k]) for k in order_k}
    partial = [k for k in order_k if MEASURED not in at_alphas[k]]
    fit, fit_text = frontier_fit()
    if fit is None and fit_text.startswith("unreadable"):
        failures.append("validation/frontier/report.md: %s" % fit_text)
    elif fit is not None and round(fit, 2) != round(MEASURED, 2):
        failures.append("the measured alpha %s us run here is not validation/frontier's fit, "
                        "%s us (validation/frontier/report.md)" % (alpha_text(MEASURED),
                                                                   alpha_text(fit)))

    lines = ["# All-to-all on the Frontier preset, after Piper", "",
             "Generated by `validation/piper/run.sh` from the results it keeps in "
             "[results.csv](results.csv) (one row per run; a cell's rows are added by the "
             "invocation that ran it, see \"Stored cells\" below): every run is a scenario on "
             "`<topology preset=\"frontier\">` written by the script, one group of 128 nodes up "
             "to 128 nodes, four for 256 and 512 (the job fills two groups at 256 nodes; the "
             "other two are there for adaptive routing's detours, as on the full machine; "
             "rows stored before this rule ran 256 nodes on two groups and are marked older "
             "engine) (DCQCN unless stated, PFC on, "
             "contiguous placement: rank r on GCD r mod 8 of node r / 8). Each message pays "
             "wh::Workload::MessageAlpha, which a rank pays one message after another (LogP's "
             "sender overhead: k messages ready together leave at alpha, 2 alpha, ..., k alpha; "
             "docs/modules/workload.md). Source of the "
             "expectations: S. Dash and F. Wang, \"Piper: Efficient Large-Scale MoE Training via "
             "Resource Modeling and Pipelined Hybrid Parallelism\", ORNL, arXiv:2605.05049 (2026), "
             "as summarised in [docs/modules/piper.md](../../docs/modules/piper.md). Buffers are decimal "
             "(1 MB = 10^6 bytes); each pair gets ceil(buffer / n) bytes.", ""]

    # --- micro-benchmark ---------------------------------------------------------------
    lines += ["## Micro-benchmark: direct all-to-all, 64 MB per GCD", "",
              "Per-GCD bandwidth: the bytes a GCD sends to the others (buffer x (n-1)/n) over the "
              "all-to-all's time. NIC bound: each GCD's off-node bytes through its half of a "
              "25 GB/s NIC (payload only).", "",
              "| GCDs | nodes | time | per-GCD bandwidth | NIC bound | wall |",
              "|---:|---:|---:|---:|---:|---:|"]
    bw = {}
    for n in sorted(micro):
        d = micro[n]
        t = d["time_ps"] * 1e-12
        bw[n] = MICRO_BYTES * (n - 1) / n / t
        bound = "-"
        if n > GCDS:
            off = MICRO_BYTES * (n - GCDS) / n
            bound = "%.1f GB/s" % (MICRO_BYTES * (n - 1) / n / (2 * off / (NIC * PAYLOAD)) / 1e9)
        lines.append("| %d | %d | %.1f us | %.1f GB/s | %s | %.2f s |" % (
            n, max(1, n // GCDS), t * 1e6, bw[n] / 1e9, bound, d["wall_s"]))
    if not micro:
        lines.append("| - | - | not run yet | | | |")
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

    # --- HALO against flat -------------------------------------------------------------
    ma = alpha_text(MEASURED)
    if fit is None:
        fit_line = "validation/frontier/report.md's fit could not be compared (%s)." % fit_text
    elif round(fit, 2) == round(MEASURED, 2):
        fit_line = ("This script defines the measured alpha once (run.sh) and, rendering, reads "
                    "validation/frontier/report.md's fit: %s us, the alpha run here." % alpha_text(fit))
    else:
        fit_line = ("This script defines the measured alpha once (run.sh) and, rendering, reads "
                    "validation/frontier/report.md's fit: %s us, **not** the %s us run here (a "
                    "check failure)." % (alpha_text(fit), ma))
    lines += ["## HALO against flat all-to-alls", "",
              "`halo` (three phases, docs/modules/workload.md#halo; a rank issues its Phase II messages, "
              "then its Phase I ones), `direct` (every message ready at once) and `rccl` "
              "(the Frontier preset's collective model: RCCL's point-to-point batches, the pairwise "
              "rounds in batches of %d, a rank's sends of a batch waiting for its sends and "
              "receives of the batch before; rows of an engine before that model ran a "
              "sliding window of 8 sends), each message paying "
              "wh::Workload::MessageAlpha on its rank's issue engine, one after another; "
              "congestion control DCQCN, and HPCC in the rows that say so. Paper: about even "
              "inside one switch group (4 nodes), HALO ahead (1.2-9x RCCL's bandwidth at 16-512 "
              "nodes) once traffic crosses switches, with RCCL's per-message cost (alpha > 0). "
              "Agreement is judged on halo/flat time: within 0.9-1.1 on one switch; below 1 "
              "across switches with alpha > 0; alpha = 0 across switches has no paper figure "
              "(RCCL always pays its launch cost). A cell's verdict is the one at the measured "
              "alpha, %s us (\"Paper agreement at the measured alpha\" below), with alpha 0 and "
              "10 us beside it as the bracket." % (WINDOW, ma), "",
              "Alpha: each cell runs at MessageAlpha 0, %s and 10 us. The measured value: "
              "validation/frontier/report.md (\"Small all-to-all\") fits MessageAlpha on "
              "published 8-byte all-to-all times on LUMI-G (MI250X, Slingshot-11; OSU "
              "micro-benchmarks, public results of github.com/zerefwayne/thesis-benchmarks): "
              "GPU-aware MPI (Cray MPICH osu_alltoall) on 16 GCDs of two nodes, the one "
              "measurement that crosses Slingshot-11, gives %s us per message (the same alpha "
              "puts 8 GCDs of one node 6%% under their measured time). %s RCCL "
              "(osu_xccl_alltoall), measured on 8 GCDs of one node only, gives at most 4.2 us "
              "(a fixed cost per collective cannot be told from a per-message one with one "
              "size). No small-message RCCL all-to-all between nodes was found (searched: "
              "that repository, whose inter-node RCCL results file is empty; De Sensi et al., "
              "SC24, whose all-to-all figure is at 2 MiB per pair; RCCL's issue tracker), and "
              "the 2 MiB RCCL trend on 16-128 GCDs does not identify alpha (0 to 20 us move the "
              "goodput less than the seed does); so 0 (no per-message cost) and 10 us (above "
              "both measured values) stay as the bracket. The preset's own 200 ns is GPU-aware "
              "MPI's, measured on point-to-point latency. Cells stored by an engine before the "
              "measured alpha was run have the bracket's 6 runs only: they are listed without "
              "a verdict at the measured alpha." % (ma, ma, fit_line), "",
              "| nodes | groups | buffer | alpha | cc | halo | direct | rccl | halo/direct | halo/rccl | "
              "paper | agrees | wall (halo, direct, rccl) |",
              "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|"]

    def judge(nodes, alpha, tt):
        """The paper's expectation and, per flat algorithm, whether the cell agrees (None:
        no paper figure)."""
        if nodes <= 4:
            return "about even", {a: 0.9 <= tt["halo"] / tt[a] <= 1.1 for a in ["direct", "rccl"]}
        if alpha > 0:
            return "HALO ahead", {a: tt["halo"] < tt[a] for a in ["direct", "rccl"]}
        return "no figure", {a: None for a in ["direct", "rccl"]}

    def verdict_text(agree):
        return ", ".join("%s: %s" % (a, "-" if v is None else "yes" if v else "**no**")
                         for a, v in agree.items())

    evidence = []
    for k in order_k:
        nodes, buf, cc = k
        for alpha in at_alphas[k]:
            r = {a: cells[k][(a, alpha)] for a in ALGS}
            tt = {a: r[a]["time_ps"] * 1e-12 for a in ALGS}
            paper, agree = judge(nodes, alpha, tt)
            lines.append("| %d | %d | %d MB | %s us | %s | %.1f us | %.1f us | %.1f us | %.2f | %.2f | %s | "
                         "%s | %.2f, %.2f, %.2f s |" % (
                             nodes, groups(nodes), buf, alpha_text(alpha), cc.upper(), tt["halo"] * 1e6,
                             tt["direct"] * 1e6, tt["rccl"] * 1e6, tt["halo"] / tt["direct"],
                             tt["halo"] / tt["rccl"], paper, verdict_text(agree),
                             r["halo"]["wall_s"], r["direct"]["wall_s"], r["rccl"]["wall_s"]))
            tr = {a: {t: (r[a][t + "_bytes"], r[a][t + "_busy_mean"], r[a][t + "_busy_max"])
                      for t in TIERS if r[a][t + "_bytes"] is not None} for a in ALGS}
            evidence.append((nodes, buf, alpha, cc, nodes * GCDS, tt, tr, r["halo"], agree,
                             {a: r[a]["msgs"] for a in ALGS}, {a: r[a]["path"] for a in ALGS}, r))
    if not order_k:
        lines.append("| - | | | | | not run yet | | | | | | | |")

    def label(e):
        return "%dn/%dMB/%sus/%s" % (e[0], e[1], alpha_text(e[2]), e[3].upper())

    def ratios(es, a):
        return ", ".join("%s %.2f" % (label(e), e[5]["halo"] / e[5][a]) for e in es) or "-"

    # --- the verdict at the measured alpha, the bracket beside it ------------------------
    at = {(e[0], e[1], e[3], e[2]): e for e in evidence}
    lines += ["", "### Paper agreement at the measured alpha", "",
              "Each cell at the measured alpha, %s us: the three times, halo/flat and the "
              "paper's verdict (as above: within 0.9-1.1 on one switch, below 1 across "
              "switches), and beside it the bracket, halo/direct and halo/rccl at alpha 0 and "
              "at 10 us. A cell stored before the measured alpha ran has \"not run\" in its "
              "place." % ma, "",
              "| nodes | groups | buffer | cc | halo | direct | rccl | halo/direct | halo/rccl | "
              "paper | agrees | alpha 0: halo/direct, halo/rccl | alpha 10 us: halo/direct, halo/rccl |",
              "|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|---|"]
    measured = []  # the evidence at the measured alpha, one per cell that has it
    for k in order_k:
        nodes, buf, cc = k
        br = []
        for alpha in BRACKET:
            tt = at[(nodes, buf, cc, alpha)][5]
            br.append("%.2f, %.2f" % (tt["halo"] / tt["direct"], tt["halo"] / tt["rccl"]))
        e = at.get((nodes, buf, cc, MEASURED))
        if e is None:
            lines.append("| %d | %d | %d MB | %s | not run | | | | | | | %s | %s |" % (
                nodes, groups(nodes), buf, cc.upper(), br[0], br[1]))
            continue
        measured.append(e)
        tt = e[5]
        paper, agree = judge(nodes, MEASURED, tt)
        lines.append("| %d | %d | %d MB | %s | %.1f us | %.1f us | %.1f us | %.2f | %.2f | %s | %s | %s | %s |" % (
            nodes, groups(nodes), buf, cc.upper(), tt["halo"] * 1e6, tt["direct"] * 1e6,
            tt["rccl"] * 1e6, tt["halo"] / tt["direct"], tt["halo"] / tt["rccl"], paper,
            verdict_text(agree), br[0], br[1]))
    if not order_k:
        lines.append("| - | | | | not run yet | | | | | | | | |")

    def standing(es, a):
        """The cells of ES where HALO is ahead of A (halo/A below 0.9), even (0.9-1.1)
        and behind (above 1.1), as text."""
        parts = []
        for name, f in [("ahead (below 0.9)", lambda r: r < 0.9),
                        ("even (0.9-1.1)", lambda r: 0.9 <= r <= 1.1),
                        ("behind (above 1.1)", lambda r: r > 1.1)]:
            got = [e for e in es if f(e[5]["halo"] / e[5][a])]
            parts.append("%s in %d%s" % (name, len(got), " (%s)" % ", ".join(
                "%dn/%dMB/%s" % (e[0], e[1], e[3].upper()) for e in got) if got else ""))
        return "; ".join(parts)

    m_one = [e for e in measured if e[0] <= 4]
    m_across = [e for e in measured if e[0] > 4]
    count = lambda es, a, f: sum(1 for e in es if f(e[5]["halo"] / e[5][a]))
    lines += [""]
    if measured:
        lines += ["What the measured alpha gives, %s us, in the %d cells run at it: against rccl "
                  "HALO is %s; against direct it is %s. The paper's verdict: on one switch HALO "
                  "is within 10%% of direct in %d of %d cells and of rccl in %d of %d; across "
                  "switches it is ahead (below 1) of rccl in %d of %d cells and of direct in %d "
                  "of %d." % (
                      ma, len(measured), standing(measured, "rccl"), standing(measured, "direct"),
                      count(m_one, "direct", lambda r: 0.9 <= r <= 1.1), len(m_one),
                      count(m_one, "rccl", lambda r: 0.9 <= r <= 1.1), len(m_one),
                      count(m_across, "rccl", lambda r: r < 1), len(m_across),
                      count(m_across, "direct", lambda r: r < 1), len(m_across))]
        for alpha in BRACKET:
            es = [at[(e[0], e[1], e[3], alpha)] for e in measured]
            lines += ["", "The bracket at %s us, the same %d cells: against rccl HALO is %s; "
                      "against direct it is %s." % (alpha_text(alpha), len(es), standing(es, "rccl"),
                                                    standing(es, "direct"))]
    else:
        lines += ["No stored cell has run at the measured alpha yet."]
    if partial:
        lines += ["", "Stored without the measured alpha's runs (%d cells, the bracket's 6 runs of "
                  "an engine before it; not counted above): %s." % (
                      len(partial), ", ".join(cell_name(k) for k in partial))]

    # a summary of the verdicts per alpha, counted from the table above
    stored_at = [a for a in ALPHAS if any(e[2] == a for e in evidence)]
    lines += ["", "Per alpha, over every cell stored at it:", ""]
    for alpha in stored_at:
        es = [e for e in evidence if e[2] == alpha]
        across = [e for e in es if e[0] > 4]
        inside = [e for e in es if e[0] <= 4]
        lines.append("- alpha %s us (%d cells): across switches HALO is ahead of rccl in %d of "
                     "%d cells and of direct in %d of %d; on one switch it is within 10%% of "
                     "direct in %d of %d cells and of rccl in %d of %d." % (
                         alpha_text(alpha), len(es),
                         count(across, "rccl", lambda r: r < 1), len(across),
                         count(across, "direct", lambda r: r < 1), len(across),
                         count(inside, "direct", lambda r: 0.9 <= r <= 1.1), len(inside),
                         count(inside, "rccl", lambda r: 0.9 <= r <= 1.1), len(inside)))
    lines += ["", "Ratios are halo/flat time per cell (nodes/buffer/alpha/cc; below 1: HALO "
              "ahead):", ""]
    for alpha in stored_at:
        es = [e for e in evidence if e[2] == alpha]
        for where, sel in [("across switches", lambda e: e[0] > 4), ("one switch", lambda e: e[0] <= 4)]:
            for a in ["rccl", "direct"]:
                lines.append("- %s, alpha %s us, halo/%s: %s" % (
                    where, alpha_text(alpha), a, ratios([e for e in es if sel(e)], a)))
    lines += [""]
    one0 = [e for e in evidence if e[2] == 0 and groups(e[0]) == 1]
    win0 = [e for e in one0 if e[5]["halo"] < e[5]["direct"]]
    # issue-bound cells: direct's serial issue ((n-1) alpha) longer than its alpha-0 time
    t0 = {(e[0], e[1], e[3]): e[5]["direct"] for e in evidence if e[2] == 0}
    issue = []
    for alpha in [a for a in stored_at if a > 0]:
        bound = {True: [0, 0], False: [0, 0]}
        for e in evidence:
            key = (e[0], e[1], e[3])
            if e[0] > 4 and e[2] == alpha and key in t0:
                b = bound[(e[4] - 1) * e[2] * 1e-6 > t0[key]]
                b[0] += e[5]["halo"] < e[5]["direct"]
                b[1] += 1
        issue.append("with alpha = %s us direct is issue-bound (its (n-1) alphas take longer "
                     "than its time at alpha 0) in %d cells, and HALO is ahead of it in %d of "
                     "them; it is bandwidth-bound in %d cells, and HALO is ahead in %d" % (
                         alpha_text(alpha), bound[True][1], bound[True][0], bound[False][1],
                         bound[False][0]))
    lines += ["Across switches " + "; ".join(issue) + ".", "",
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
    if two:
        lines += ["", "On %s nodes the job spans several groups of the preset, which joins a pair of "
                  "groups by 4 global links (wh::Dragonfly::GlobalLinksPerPair, 25 GB/s each way): "
                  "on 256 nodes the job fills two of the machine's four groups and half of every GCD's "
                  "bytes cross them (the other two groups are there for non-minimal detours, as on "
                  "the full Frontier; a 2-group machine, which rows of an engine before that rule "
                  "ran on, has none). Time against the global-link "
                  "time (their bytes, headers and acknowledgements included, over their total rate) and their largest "
                  "busy fraction: %s. An algorithm that is not issue-bound is held by the global "
                  "links there, and how evenly its messages spread over the 4 parallel links "
                  "(flow-count routing: one link busy all the run while others idle) sets how far "
                  "above the global-link time it ends; the flat all-to-alls at alpha 10 us are issue-bound "
                  "(n-1 alphas per GCD, %.1f ms on 256 nodes), while at the measured alpha their n-1 "
                  "alphas take %.1f ms there. The paper's multi-group runs had the rest of the machine "
                  "to spread over." % (
                      ", ".join(sorted({str(e[0]) for e in two}, key=int)),
                      "; ".join("%s %s %.1f ms / %.1f ms, busy %.2f" % (
                          label(e), a, e[5][a] * 1e3, e[11][a]["global_time_ps"] * 1e-9,
                          e[6][a]["global"][2]) for e in two for a in ALGS if "global" in e[6][a]),
                      (256 * GCDS - 1) * 10e-3, (256 * GCDS - 1) * MEASURED * 1e-3)]

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
    for nodes, buf, alpha, cc, n, tt, tr, ph, agree, msgs, path, r in evidence:
        cell = "%d nodes, %d MB, %s us, %s" % (nodes, buf, alpha_text(alpha), cc.upper())
        why = ""
        if any(v is False for v in agree.values()):
            have = all(k in tr[a] for a in tr for k in ["nic", "fabric"])
            if not have:
                failures.append("%s: disagrees with the paper and its link loads are missing" % cell)
                continue
            p2 = ph["p2_end_ps"] * 1e-6
            p3 = (ph["p3_end_ps"] - ph["p2_end_ps"]) * 1e-6
            parts = ["HALO's last Phase II message arrives at %.1f us and Phase III (relays "
                     "forwarding over the fabric) ends %.1f us later" % (p2, p3),
                     "nic busy %.2f (halo) vs %.2f (direct), %.2f (rccl)" % (
                         tr["halo"]["nic"][1], tr["direct"]["nic"][1], tr["rccl"]["nic"][1]),
                     "HALO moves %.1fx the fabric bytes of direct" % (
                         tr["halo"]["fabric"][0] / tr["direct"]["fabric"][0])]
            if "global" in tr["halo"]:
                parts.append("the %d global links between the groups: largest busy %.2f (halo), "
                             "%.2f (direct), %.2f (rccl), mean %.2f (halo)" % (
                                 ph["global_links"], tr["halo"]["global"][2],
                                 tr["direct"]["global"][2] if "global" in tr["direct"] else 0,
                                 tr["rccl"]["global"][2] if "global" in tr["rccl"] else 0,
                                 tr["halo"]["global"][1]))
            if alpha:
                parts.append("alphas on the path: halo %d x %s us = %s us, direct and rccl %d x = %s us" % (
                    path["halo"], alpha_text(alpha), us(path["halo"] * alpha), path["direct"],
                    us(path["direct"] * alpha)))
            z = t_at.get((nodes, buf, 0, cc))  # the same cell at alpha 0
            for a, v in agree.items():
                if v is not False:
                    continue
                d = (tt["halo"] - tt[a]) * 1e6
                if not alpha:
                    parts.append("%s %s by %.1f us: no alpha to save, and Phase III's %.1f us "
                                 "follow the last Phase II arrival" % (
                                     "behind" if d > 0 else "ahead of", a, abs(d), p3))
                elif z:
                    cost = {k: (tt[k] - z[k]) * 1e6 for k in ["halo", a]}
                    parts.append("%s %s by %.1f us: alpha %s us adds %.1f us to %s (its serial issue "
                                 "overlaps its transfers) and %.1f us to HALO, against HALO's %.1f us "
                                 "%s at alpha 0" % (
                                     "behind" if d > 0 else "ahead of", a, abs(d), alpha_text(alpha),
                                     cost[a], a,
                                     cost["halo"], abs(z["halo"] - z[a]) * 1e6,
                                     "deficit" if z["halo"] > z[a] else "lead"))
            why = "; ".join(parts)
        for alg in ALGS:
            lines.append("| %s | %s | %.1f us | %s | %s | %s | %s | %d x %s us = %s us | %d (%s us) | %s |" % (
                cell, alg, tt[alg] * 1e6, tier_text(tr[alg], "nic"), tier_text(tr[alg], "fabric"),
                tier_text(tr[alg], "local"), tier_text(tr[alg], "global"), msgs[alg],
                alpha_text(alpha), us(msgs[alg] * alpha), path[alg],
                us(path[alg] * alpha), why if alg == "halo" else ""))

    # --- stored cells and the invocations that ran them --------------------------------
    lines += ["", "### Stored cells", "",
              "Each cell's runs (3 algorithms x the alphas it has: 0, %s and 10 us, or 0 and "
              "10 us alone from an engine before the measured alpha) as stored in results.csv: "
              "the invocation that ran them (its start, UTC), the engine they ran on (the last "
              "commit of the engine's sources, `+modified` when the tree had uncommitted "
              "changes there), their summed wall time on this machine (2 cores, other work "
              "beside), the largest peak resident memory and the events. The engine of this "
              "rendering is `%s`; a cell from another engine counts as current when a chain of "
              "fingerprint reruns shows this engine computes the same as that engine (marked "
              "*reproduced*, see \"Engine equivalence\" below), else it is marked **older "
              "engine** and is rerun by naming it in WH_PIPER_CELLS." % (ma, engine), "",
              "| cell | alphas | run | engine | wall of its runs | peak RSS | events |",
              "|---|---|---|---|---:|---:|---:|"]
    stale = []
    linked = set()  # (CC, engine) of stored rows current through a chain of records
    for k in order_k:
        rs = list(cells[k].values())
        eng = sorted({d["engine"] for d in rs})
        chain = chains[k[2]]
        old = any(e not in chain for e in eng)
        linked |= {(k[2], e) for e in eng if chain.get(e)}
        if old:
            stale.append(cell_name(k))
        rss_max = max((d["rss_kb"] or 0) for d in rs)
        lines.append("| %d nodes, %d MB, %s | %s | %s | `%s`%s | %.1f s | %s | %d |" % (
            k[0], k[1], k[2].upper(), ", ".join(alpha_text(a) for a in at_alphas[k]) + (
                "" if MEASURED in at_alphas[k] else " (no measured-alpha runs)"),
            ", ".join(sorted({d["run"] for d in rs})), ", ".join(eng),
            " (**older engine**)" if old else " (*reproduced*)" if any(chain[e] for e in eng) else "",
            sum(d["wall_s"] for d in rs),
            "%.2f GB" % (rss_max * 1024 / 1e9) if rss_max else "-", sum(d["events"] for d in rs)))
    if micro:
        rs = list(micro.values())
        lines.append("| micro-benchmark | - | %s | `%s` | %.1f s | %.2f GB | %d |" % (
            ", ".join(sorted({d["run"] for d in rs})), ", ".join(sorted({d["engine"] for d in rs})),
            sum(d["wall_s"] for d in rs), max((d["rss_kb"] or 0) for d in rs) * 1024 / 1e9,
            sum(d["events"] for d in rs)))
    invocations = {}
    for d in rows:
        v = invocations.setdefault(d["run"], {"cells": set(), "runs": 0, "wall": 0.0})
        v["cells"].add(d["cell"])
        v["runs"] += 1
        v["wall"] += d["wall_s"]
    lines += ["", "Invocations whose runs are stored (wall: the sum of their stored runs' walls; "
              "a later invocation's micro-benchmark replaces an earlier one's):", "",
              "| run | cells stored | runs | wall |", "|---|---|---:|---:|"]
    for run in sorted(invocations):
        v = invocations[run]
        lines.append("| %s | %s | %d | %.0f s |" % (
            run, ", ".join(sorted(v["cells"], key=lambda c: (c == "micro", order(
                {"cell": c, "alpha_us": 0, "alg": "halo", "gcds": 0})))), v["runs"], v["wall"]))
    if stale:
        lines += ["", "Cells from an older engine: %s." % ", ".join(stale)]
    if partial:
        lines += ["", "Cells without the measured alpha's runs: %s." % ", ".join(
            cell_name(k) for k in partial)]
    if extra:
        lines += ["", "Stored rows at an alpha this script no longer runs (left out above): %s." % (
            "; ".join("%s at %s us" % (cell_name(k), ", ".join(alpha_text(a) for a in sorted(v)))
                      for k, v in sorted(extra.items())))]

    reps = [(k, a) for k in order_k for (a, al), d in cells[k].items() if d["repeat"] != "-"]
    lines += ["", "Determinism: each invocation runs the HALO alpha-10 run of its first cell "
              "twice and stores the verdict: %s." % (
                  ", ".join("%s %s" % (run_name(k, "halo", 10),
                                       "flows.csv identical" if cells[k][("halo", 10)]["repeat"] == "ok"
                                       else "flows.csv DIFFERENT") for k, _ in reps) or "none stored")]

    # --- engine equivalence -----------------------------------------------------------
    lines += ["", "### Engine equivalence", "",
              "Each invocation that runs anything reruns the fingerprint cells %s (each at the "
              "alphas it is stored at: its 9 runs, or the 6 of alpha 0 and 10 us of an engine "
              "before the measured alpha; unless it runs the cell anyway) and compares every "
              "simulated field of each run (%s) with the stored row, which it leaves as it is; per engine of the stored "
              "rows it records in [engines.csv](engines.csv) whether its engine reproduces "
              "that engine (all fields equal) or the first field that differs. Exact equality "
              "is symmetric and transitive, so a chain of equal records (the latest record of a "
              "pair of engines decides) links a stored cell's engine to this rendering's engine "
              "`%s` and the cell counts as current. The records are per congestion control "
              "(a record compares the fingerprint cells of one CC, or, in older records, of "
              "both), and a cell needs a chain of records of its own CC: an engine change in "
              "one CC's code leaves the other CC's cells current. A record that differs "
              "leaves the cells of that engine and CC marked older engine; it is reported "
              "here and is not by itself a check failure."
              % (", ".join(FINGERPRINT), ", ".join(SIMULATED), engine), ""]
    if linked:
        lines += ["Stored cells current through the records: %s." % "; ".join(
            "%s cells of engine `%s`: " % (cc.upper(), e) + " and ".join(
                record_text(r) for r in reversed(chains[cc][e])) for cc, e in sorted(linked)), ""]
    if recs:
        lines += ["| engine | reproduces | verdict | fingerprint cells | runs | invocation |",
                  "|---|---|---|---|---:|---|"]
        for r in sorted(recs, key=lambda r: (r["run"], r["engine"], r["reproduces"])):
            lines.append("| `%s` | `%s` | %s | %s | %d | %s |" % (
                r["engine"], r["reproduces"], "all fields equal" if r["verdict"] == "equal"
                else "**" + r["verdict"] + "**", ", ".join(r["cells"].split(" ")), r["runs"], r["run"]))
    else:
        lines += ["No records yet."]

    # --- cells not run -----------------------------------------------------------------
    per, mem = memory_fit(rows)
    model = wall_model(rows)
    avail = physical_bytes()
    missing = [k for k in grid() if k not in cells or MEASURED not in at_alphas[k]]
    if missing:
        lines += ["", "### Cells not run", "",
                  "Cells of the full grid (4-512 nodes x 1, 16, 128 MB x DCQCN, HPCC, each 3 "
                  "algorithms x 3 alphas = 9 runs) with no stored result, or stored without the "
                  "measured alpha's runs (an engine before it ran 0 and 10 us only; a rerun runs "
                  "all 9 and replaces the 6), with an estimate of their wall time on this machine (2 cores) from a model fitted on the stored runs "
                  "(either congestion control). Events follow flows and MTU packets, each times "
                  "the tiers its path crosses (1 plus the shares of GCD pairs leaving the node, "
                  "the switch, the group): events = a x flows x tiers + b x packets x tiers, a "
                  "and b fitted per algorithm and alpha (least squares on the relative error; an "
                  "alpha with too few stored runs to fit takes the larger of the estimates at 0 "
                  "and 10 us); "
                  "the flows are n(n-1) for direct and rccl, n(nodes + 13) for HALO (n GCDs), the "
                  "packets buffer/n bytes per message over the 4096-byte MTU (HALO: its bytes "
                  "over the MTU). A run's wall is its events over the event rate of its algorithm "
                  "at its flows (the more flows, the larger the run's memory and the fewer events "
                  "per second): a line of log(events/s) on log(flows) through the stored runs of "
                  "at least 1 s, the median of the pairwise slopes (Theil-Sen), so that a run "
                  "slowed by a busy machine moves it little. \"from\" gives the cell's estimated "
                  "events and the runs fitted. A run may take at most 30 minutes (the cell's "
                  "longest run as estimated), and a flat all-to-all may need at most 90% of the machine's memory. Without WH_PIPER_CELLS an "
                  "invocation runs the cells within these bounds (and whose memory is free at "
                  "the time), cheapest first, up to WH_PIPER_BUDGET seconds of estimated wall.", "",
                  "| nodes | buffer | cc | estimated wall of its 9 runs | from | why not run |",
                  "|---:|---:|---|---:|---|---|"]
        left = 0.0
        for k in missing:
            w, frm, bnd = why_not(model, per, mem, k, avail)
            if bnd is None:
                bnd = "within the bounds: not run yet"
                left += w or 0
                if k in cells:
                    bnd = "within the bounds: stored at 0 and 10 us only"
            elif k in cells:
                bnd = "stored at 0 and 10 us only; " + bnd
            lines.append("| %d | %d MB | %s | %s | %s | %s |" % (
                k[0], k[1], k[2].upper(), "-" if w is None else "%.0f s" % w, frm, bnd))
        lines += ["", "The cells within the bounds not run yet (or not at the measured alpha) add "
                  "up to about %.0f s (%.1f h) of estimated wall." % (left, left / 3600)]

    # --- memory: bytes per flow, and 512 nodes ------------------------------------------
    if per is not None:
        (f0, m0), (f1, m1) = mem[-2], mem[-1]
        f512 = 4096 * 4095
        lines += ["", "### Memory", "",
                  "Peak resident memory of the stored direct runs (/usr/bin/time, the largest of "
                  "a node count's runs): %s. Between %d and %d flows it grows by **%.0f bytes per "
                  "flow** (the flow record, its transport and congestion-control state, the "
                  "workload's transfer and flow reference, and the network's growth with the "
                  "node count). A flat all-to-all on 512 nodes (4 groups) has 4096 x 4095 = %.1f "
                  "M flows: about %.1f GB, against %.0f GB of memory on this machine." % (
                      ", ".join("%.2f GB at %d flows" % (m / 1e9, f) for f, m in mem[-3:]),
                      f0, f1, per, f512 / 1e6, memory_need(per, mem, 512) / 1e9,
                      physical_bytes() / 1e9)]

    # --- plots ---------------------------------------------------------------------------
    here = os.path.dirname(os.path.abspath(report))
    gp = shutil.which("gnuplot")
    plots = []
    if gp and micro and evidence:
        os.makedirs(out, exist_ok=True)
        term = "set terminal svg noenhanced size 900,600 font 'sans,11'\n"
        with open(os.path.join(out, "micro.dat"), "w") as f:
            for n in sorted(micro):
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
                for alpha in ALPHAS:
                    es = sorted((e for e in evidence if e[1] == b and e[2] == alpha and e[3] == cc),
                                key=lambda e: e[0])
                    if len(es) < 2:
                        continue
                    dat = os.path.join(out, "ratio-%d-%s-%s.dat" % (b, alpha_text(alpha), cc))
                    with open(dat, "w") as f:
                        for e in es:
                            f.write("%d %.4f %.4f\n" % (e[0], e[5]["halo"] / e[5]["direct"],
                                                        e[5]["halo"] / e[5]["rccl"]))
                    colour = {1: "#1f77b4", 16: "#ff7f0e", 128: "#d62728"}.get(b, "black")
                    # solid the measured alpha, dashed 0, dash-dotted 10 us
                    series.append((dat, "%d MB, alpha %s us, %s" % (b, alpha_text(alpha), cc.upper()),
                                   "dt %d lc rgb '%s'" % (1 if alpha == MEASURED else 2 if alpha == 0
                                                          else 4, colour),
                                   "lw 2 pt 7" if cc == "dcqcn" else "lw 1 pt 6"))
        ratio = term.replace("900,600", "1200,760") + (
            "set output 'piper-halo-flat.svg'\nset multiplot layout 1,2 title "
            "'HALO against flat all-to-alls: halo / flat time (below 1: HALO ahead)'\n"
            "set logscale x 2\nset logscale y 2\nset grid\nset xlabel 'nodes'\n"
            "set key below horizontal maxrows 6 font ',8'\n")
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
                  "nodes, one line per buffer (colour), alpha (solid the measured %s us, dashed "
                  "0, dash-dotted 10 us) and "
                  "congestion control (thick with filled points DCQCN, thin with open points "
                  "HPCC)." % alpha_text(MEASURED)]
    elif gp and micro and evidence:
        lines += ["No plots: gnuplot failed on %s/*.gp." % os.path.basename(out)]
    elif gp:
        lines += ["No plots: nothing stored to plot."]
    else:
        lines += ["No plots: gnuplot is not on the PATH (Debian: gnuplot-nox)."]

    nruns = len(rows)
    lines += ["", "Wall time of all %d stored runs: %.0f s (each run's is listed above)." % (
        nruns, sum(d["wall_s"] for d in rows)), ""]
    finish(lines, report, check, failures, "All checks met.")


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "plan" and len(argv) == 4:
        plan(argv[2], float(argv[3]))
    elif mode == "store" and len(argv) in (7, 8):
        store(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7] if len(argv) == 8 else "")
    elif mode == "alphas" and len(argv) in (2, 4):
        alphas(argv[2] if len(argv) == 4 else "", argv[3] if len(argv) == 4 else "")
    elif mode == "fingerprint-cells" and len(argv) == 3:
        fingerprint_cells(argv[2])
    elif mode == "fingerprint" and len(argv) >= 8:
        fingerprint(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7:])
    elif mode == "render" and len(argv) == 9:
        render(argv[2], argv[3], argv[4], argv[5] == "1", argv[6], argv[7], argv[8] == "1")
    else:
        print("report.py: usage: see its docstring", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
