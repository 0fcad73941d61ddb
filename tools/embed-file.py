#!/usr/bin/env python3
"""Writes a C source file that holds the bytes of an input file as a string, so the
engine carries its scenario schema and needs no install path at run time.
Usage: embed-file.py INPUT OUTPUT SYMBOL"""
import sys

src, dst, sym = sys.argv[1:4]
data = open(src, "rb").read()
with open(dst, "w") as out:
    out.write("/* Generated from %s; do not edit. */\n#include <stddef.h>\n" % src.split("/")[-1])
    out.write("const char %s[] =\n" % sym)
    for i in range(0, len(data), 64):
        chunk = data[i:i + 64]
        out.write('  "' + "".join("\\x%02x" % b for b in chunk) + '"\n')
    out.write(";\nconst size_t %s_len = %d;\n" % (sym, len(data)))
