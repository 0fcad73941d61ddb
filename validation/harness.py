"""What the validation harnesses' reports share: reading the outputs of the runs a
harness left in OUT/NAME/ (summary.json, flows.csv, links.csv) and the conservation
check every run gets. A harness's report imports it with validation/ on its path."""
import csv
import json
import os
import sys


class Runs:
    """The runs below OUT; clean() appends what it finds wrong to FAILURES."""

    def __init__(self, out, failures):
        self.out = out
        self.failures = failures

    def summary(self, name):
        with open(os.path.join(self.out, name, "summary.json")) as f:
            return json.load(f)

    def rows(self, name, what):
        """The rows of OUT/NAME/WHAT (a CSV file with a header) as dicts."""
        with open(os.path.join(self.out, name, what)) as f:
            return list(csv.DictReader(f))

    def clean(self, name):
        """The run's summary, after noting drops, reordering, an early stop, a
        retransmission timeout or an incomplete message as failures. Every run here is
        on a lossless (PFC) fabric, where a timeout resends data that was only queued."""
        s = self.summary(name)
        if (s.get("drops", 0) or s.get("out_of_order_packets", 0) or s.get("stopped_early")
                or s.get("timeouts", 0)):
            self.failures.append("%s: drops %d, out of order %d, timeouts %d, stopped %s" % (
                name, s.get("drops", 0), s.get("out_of_order_packets", 0), s.get("timeouts", 0),
                s.get("stopped_early")))
        if s["flows_completed"] != s["flows"]:
            self.failures.append("%s: %d of %d messages completed" % (
                name, s["flows_completed"], s["flows"]))
        return s


def finish(lines, report, check, failures, passed, prog="run.sh"):
    """Writes the report's LINES (with a Check section under --check, PASSED when
    nothing failed) to REPORT and prints it, prints each failure on stderr (after PROG,
    the harness script's name) and exits:
    status 1 under --check with failures, else 0."""
    if check:
        lines = lines + ["## Check", ""] + (["- FAIL: " + f for f in failures] if failures else [passed])
    text = "\n".join(lines) + "\n"
    with open(report, "w") as f:
        f.write(text)
    print(text)
    for f in failures:
        print(prog + ": check failed: " + f, file=sys.stderr)
    if check:
        print(prog + (": check passed" if not failures else ": check failed"), file=sys.stderr)
    sys.exit(1 if check and failures else 0)
