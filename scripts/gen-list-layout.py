#!/usr/bin/env python3
"""Writes the explicit vertical list that scripts/load.sh and scripts/layout-rss.sh post.

    scripts/gen-list-layout.py N FILE

Item i is {"id": "<i>", "rect": [0, 50 i, 375, 50], "reuse": "row"}; written in chunks, so a
1,000,000-item list (57 MB) needs little memory.
"""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write('{"items":[')
    chunk = 100000
    for start in range(0, n, chunk):
        f.write(",".join('{"id":"%d","rect":[0,%d,375,50],"reuse":"row"}' % (i, 50 * i)
                         for i in range(start, min(n, start + chunk))))
        if start + chunk < n:
            f.write(",")
    f.write(']}')
