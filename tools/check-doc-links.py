#!/usr/bin/env python3
"""Checks that every relative link of the project's Markdown files resolves.

A link [text](target) or [text](target#anchor) whose target is not a URL must name a
file or directory of the tree; an anchor must be the slug of a heading of the target
Markdown file (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens,
-1, -2 for repeats). Links inside code blocks and code spans are not links. Prints
each broken link as FILE:LINE: and exits 1 when there is one.

  tools/check-doc-links.py [--root DIR]
"""
import argparse
import os
import re
import subprocess
import sys

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
HEADING = re.compile(r'^#{1,6}\s+(.*?)\s*#*\s*$')


def markdown_files(root):
    out = subprocess.run(['git', 'ls-files', '*.md'], cwd=root, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return [f for f in out.stdout.split() if os.path.exists(os.path.join(root, f))]
    found = []
    for d, _, names in os.walk(root):
        if '/build' in d or '/.git' in d:
            continue
        found += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith('.md')]
    return found


def prose_lines(text, spans=False):
    """Yields (line number, line) outside fenced code blocks, code spans blanked unless
    `spans`."""
    fence = False
    for i, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if not fence:
            yield i, line if spans else re.sub(r'`[^`]*`', '', line)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding='utf-8') as fh:
            for _, line in prose_lines(fh.read(), spans=True):
                m = HEADING.match(line)
                if not m:
                    continue
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                out.add(base if n == 0 else '%s-%d' % (base, n))
        cache[path] = out
    return cache[path]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default='.', help='the source tree')
    args = ap.parse_args()
    bad = checked = 0
    for f in sorted(markdown_files(args.root)):
        with open(os.path.join(args.root, f), encoding='utf-8') as fh:
            text = fh.read()
        for n, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    continue
                checked += 1
                path, _, anchor = target.partition('#')
                full = os.path.normpath(os.path.join(args.root, os.path.dirname(f), path)) \
                    if path else os.path.join(args.root, f)
                if not os.path.exists(full):
                    print('%s:%d: %s: no such file' % (f, n, target))
                    bad += 1
                elif anchor and full.endswith('.md') and anchor not in anchors(full):
                    print('%s:%d: %s: no heading #%s in %s' % (f, n, target, anchor, path or f))
                    bad += 1
    if bad:
        print('doc links: %d of %d relative links broken' % (bad, checked))
        return 1
    print('doc links: ok (%d relative links)' % checked)
    return 0


if __name__ == '__main__':
    sys.exit(main())
