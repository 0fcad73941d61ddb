#!/usr/bin/env python3
"""Compares two output trees file by file: every *.json file as parsed values (keys
named wall* or process* (wall-clock times) removed at any depth, 0 and 0.0 equal as Python compares them), every other
file byte for byte. Prints one line per difference and a summary; exits 1 when any file
differs or is only on one side.

usage: json-equal.py DIR_A DIR_B
"""
import json
import os
import sys


def strip_wall(v):
    if isinstance(v, dict):
        return {k: strip_wall(x) for k, x in v.items() if not k.startswith(("wall", "process"))}
    if isinstance(v, list):
        return [strip_wall(x) for x in v]
    return v


def files(root):
    out = set()
    for d, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def first_difference(a, b, path="$"):
    if type(a) is dict and type(b) is dict:
        if list(a) != list(b):
            return "%s: keys %s vs %s" % (path, list(a), list(b))
        for k in a:
            d = first_difference(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if type(a) is list and type(b) is list:
        if len(a) != len(b):
            return "%s: %d vs %d elements" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a_root, b_root = sys.argv[1:]
    a_files, b_files = files(a_root), files(b_root)
    bad = 0
    for f in sorted(a_files ^ b_files):
        print("only in %s: %s" % (a_root if f in a_files else b_root, f))
        bad += 1
    n_json = n_other = json_bad = other_bad = 0
    for f in sorted(a_files & b_files):
        pa, pb = os.path.join(a_root, f), os.path.join(b_root, f)
        if f.endswith(".json"):
            n_json += 1
            with open(pa) as fa, open(pb) as fb:
                d = first_difference(strip_wall(json.load(fa)), strip_wall(json.load(fb)))
            if d:
                print("%s: %s" % (f, d))
                json_bad += 1
        else:
            n_other += 1
            with open(pa, "rb") as fa, open(pb, "rb") as fb:
                if fa.read() != fb.read():
                    print("%s: bytes differ" % f)
                    other_bad += 1
    print("%d of %d JSON files equal as parsed values, %d of %d other files byte-identical, "
          "%d files on one side only" % (n_json - json_bad, n_json, n_other - other_bad, n_other,
                                         bad))
    sys.exit(1 if bad or json_bad or other_bad else 0)


if __name__ == "__main__":
    main()
