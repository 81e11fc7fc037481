#!/usr/bin/env python3
"""Flag suspicious lines in a document."""
import re
import sys

PATTERNS = [
    re.compile(r"ignore\s+(all\s+)?(previous|prior)\s+instructions", re.I),
    re.compile(r"curl\s+[^|]*\|\s*(sudo\s+)?(ba)?sh"),
    re.compile(r"base64\s+(-d|--decode)\s*\|\s*(ba)?sh"),
    re.compile(r"~/\.ssh/id_[a-z0-9]+"),
    re.compile(r"/dev/tcp/"),
]

for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if any(p.search(line) for p in PATTERNS):
        print(f"{n}: {line.rstrip()}")
