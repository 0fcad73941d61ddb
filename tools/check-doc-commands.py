#!/usr/bin/env python3
"""Runs the whsim commands the README and the docs show, as shown, and checks that each
succeeds.

Every command of a ```sh block of README.md and of docs/ that starts with ./build/whsim
(lines ending in a backslash continued, a trailing "# comment" dropped, commands joined
by && run together) is run from the top of the source tree, file by file and in order:
a later command may read an earlier one's outputs, written below out/. Two kinds are
listed but not run: templates, whose scenario is a placeholder the reader supplies
(FILE.xml, or a file the text has the reader write), and the training presets of
scenarios/presets/, which take minutes. make is not run: make test is what runs this.
Prints each failing command with the end of its output and exits 1 when one fails.

  tools/check-doc-commands.py [--root DIR] [FILE.md ...]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

COMMENT = re.compile(r'\s+#\s.*$')


def commands(path):
    """Yields (line, command) for each ./build/whsim command of the file's sh blocks."""
    fence, pending, start = None, '', 0
    with open(path, encoding='utf-8') as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip('\n')
            if line.startswith('```'):
                fence = line[3:].strip() if fence is None else None
                continue
            if fence != 'sh':
                continue
            if not pending:
                start = n
            line = COMMENT.sub('', line)
            if line.endswith('\\'):
                pending += line[:-1] + ' '
                continue
            cmd, pending = (pending + line).strip(), ''
            if cmd.startswith('./build/whsim'):
                yield start, cmd


def why_not_run(root, cmd):
    """Why `cmd` is listed but not run, or None."""
    words = shlex.split(cmd.replace('&&', ' '))
    if any('scenarios/presets/' in w for w in words):
        return 'a training preset (minutes)'
    for i, w in enumerate(words):
        after_out = i > 0 and words[i - 1] in ('--out', '-o', '--emit-scenario')
        if w.endswith('.xml') and not after_out and not os.path.exists(os.path.join(root, w)):
            return 'a template (%s)' % w
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default='.', help='the source tree')
    ap.add_argument('files', nargs='*', help='Markdown files (default: README.md, docs/)')
    args = ap.parse_args()
    files = args.files or ['README.md'] + sorted(
        os.path.relpath(os.path.join(d, n), args.root)
        for d, _, names in os.walk(os.path.join(args.root, 'docs')) for n in names
        if n.endswith('.md'))
    bad = ran = 0
    for f in files:
        for n, cmd in commands(os.path.join(args.root, f)):
            reason = why_not_run(args.root, cmd)
            if reason:
                print('%s:%d: not run, %s: %s' % (f, n, reason, cmd))
                continue
            ran += 1
            p = subprocess.run(['bash', '-c', cmd], cwd=args.root, capture_output=True,
                               text=True)
            if p.returncode != 0:
                bad += 1
                tail = (p.stdout + p.stderr).strip().split('\n')[-3:]
                print('%s:%d: %s: exit %d\n  %s' % (f, n, cmd, p.returncode, '\n  '.join(tail)))
    if bad:
        print('doc commands: %d of %d failed' % (bad, ran))
        return 1
    print('doc commands: ok (%d commands run from README.md and docs/)' % ran)
    return 0


if __name__ == '__main__':
    sys.exit(main())
