#!/usr/bin/env python3
"""Checks that no function outside modules/wormhole/ and the tests is longer than a limit.

A function's length is counted from the first line of its signature to its closing
brace, both included, as clang-format lays the sources out (the opening and closing
braces of a function on lines of their own, in column 0). Test suites (files under a
module's test/ directory, tests/) are not checked. Prints each function over the limit
and exits 1 when there is one.

  tools/check-function-length.py [--max N] [--root DIR] [--list]
"""
import argparse
import os
import re
import subprocess
import sys

EXCLUDED = (re.compile(r'^modules/wormhole/'), re.compile(r'^tests/'),
            re.compile(r'^modules/[^/]+/test/'))
NAME = re.compile(r'([A-Za-z_]\w*(?:::\w+)*)\s*\(')


def sources(root):
    out = subprocess.run(['git', 'ls-files', '*.c', '*.cc'], cwd=root, capture_output=True,
                         text=True)
    if out.returncode == 0 and out.stdout.strip():
        files = out.stdout.split()
    else:
        files = []
        for top in ('modules', 'bindings-c', 'tools', 'examples'):
            for d, _, names in os.walk(os.path.join(root, top)):
                files += [os.path.relpath(os.path.join(d, n), root) for n in names
                          if n.endswith(('.c', '.cc'))]
    return sorted(f for f in files if not any(p.search(f) for p in EXCLUDED))


def functions(text):
    """Yields (name, first line, length) of every function definition of `text`."""
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        if lines[i] == '{' and i > 0:
            # the signature: the lines above, back to the one that starts in column 0
            start = i - 1
            while start > 0 and lines[start][:1] in (' ', '\t') and lines[start - 1].strip():
                start -= 1
            head = ' '.join(lines[start:i])
            m = NAME.search(head)
            j = i + 1
            while j < len(lines) and lines[j] != '}' and not lines[j].startswith('};'):
                j += 1
            if m and '=' not in head.split('(')[0] and not head.startswith(('struct', 'typedef',
                                                                               'enum', 'union')):
                yield m.group(1), start + 1, j - start + 1
            i = j
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--max', type=int, default=80, help='longest allowed function, in lines')
    ap.add_argument('--root', default='.', help='the source tree')
    ap.add_argument('--list', action='store_true', help='list every function over --max')
    args = ap.parse_args()
    long = []
    for f in sources(args.root):
        with open(os.path.join(args.root, f), encoding='utf-8') as fh:
            for name, line, n in functions(fh.read()):
                if n > args.max:
                    long.append((n, f, line, name))
    for n, f, line, name in sorted(long, reverse=True):
        print('%s:%d: %s: %d lines (at most %d outside modules/wormhole)' % (f, line, name, n,
                                                                          args.max))
    if long:
        print('function length: %d function(s) over %d lines' % (len(long), args.max))
        return 1
    print('function length: ok (at most %d lines outside modules/wormhole and the tests)'
          % args.max)
    return 0


if __name__ == '__main__':
    sys.exit(main())
