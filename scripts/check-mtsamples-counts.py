#!/usr/bin/env python3
"""An independent reading, in Python, of HELM's instance processing as docs/protocols/mtsamples.md
describes it (not HELM's code): prints the instance count and the reference sources for a folder of notes.
tests/tasks/mtsamples.test.ts asserts the TypeScript port gives the same figures.
  python3 scripts/check-mtsamples-counts.py tests/data/mtsamples_processed
"""
import os
import sys

folder = sys.argv[1]
count, sources, raised = 0, {}, []
for name in sorted(os.listdir(folder)):
    if not name.endswith(".txt"):
        continue
    text = open(os.path.join(folder, name), encoding="utf-8").read().strip()
    try:
        sections = {}
        for key in ["PLAN", "SUMMARY", "FINDINGS"]:
            sections[key] = (
                text.split(key + ":")[1].split("\n")[0].strip() if key + ":" in text.upper() else ""
            )
    except Exception:
        raised.append(name)
        continue
    source = next((k for k in ["PLAN", "SUMMARY", "FINDINGS"] if sections[k]), None)
    if source:
        count += 1
        sources[source] = sources.get(source, 0) + 1
print({"instances": count, "sources": sources, "raised": raised})
