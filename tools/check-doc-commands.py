#!/usr/bin/env python3
"""Runs the whsim commands the README shows, as shown, and checks that each succeeds.

Every line of a ```sh block of README.md that starts with ./build/whsim is run from the
top of the source tree, in order (a later command may read an earlier one's outputs,
written below out/). The make commands are not run: make test is what runs this.
Prints each failing command with the end of its output and exits 1 when one fails.

  tools/check-doc-commands.py [--root DIR] [FILE.md ...]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys


def commands(path):
    fence = None
    with open(path, encoding='utf-8') as fh:
        for n, line in enumerate(fh, 1):
            if line.startswith('```'):
                fence = line[3:].strip() if fence is None else None
                continue
            if fence == 'sh' and line.startswith('./build/whsim'):
                yield n, line.split('#', 1)[0].strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default='.', help='the source tree')
    ap.add_argument('files', nargs='*', default=['README.md'])
    args = ap.parse_args()
    bad = ran = 0
    for f in args.files:
        for n, cmd in commands(os.path.join(args.root, f)):
            ran += 1
            p = subprocess.run(shlex.split(cmd), cwd=args.root, capture_output=True, text=True)
            if p.returncode != 0:
                bad += 1
                tail = (p.stdout + p.stderr).strip().split('\n')[-3:]
                print('%s:%d: %s: exit %d\n  %s' % (f, n, cmd, p.returncode, '\n  '.join(tail)))
    if bad:
        print('doc commands: %d of %d failed' % (bad, ran))
        return 1
    print('doc commands: ok (%d commands of %s)' % (ran, ', '.join(args.files)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
