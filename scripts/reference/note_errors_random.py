#!/usr/bin/env python3
"""Fixture for medbench/random on the note-errors sample (run once; the output is committed).

    /usr/bin/python3 scripts/reference/note_errors_random.py > tests/data/note-errors/random-fixture.json
    npx prettier --write tests/data/note-errors/random-fixture.json

Yes with probability 0.5 per note, numpy default_rng(0): one random() per note over the test file in file
order, error note before twin; Yes when the draw is below 0.5.
"""
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "specs/note-errors/sample/pairs_test.jsonl"
rows = [json.loads(l) for l in PAIRS.read_text().splitlines() if l]
ids = [f"{r['pair_id']}/{side}" for r in rows for side in ("error", "clean")]
draws = np.random.default_rng(0).random(len(ids))
verdicts = {i: ("Yes" if u < 0.5 else "No") for i, u in zip(ids, draws)}
both = sum(
    verdicts[f"{r['pair_id']}/error"] == "Yes" and verdicts[f"{r['pair_id']}/clean"] == "No" for r in rows
)
json.dump(
    {"made_by": "scripts/reference/note_errors_random.py", "numpy": np.__version__, "verdicts": verdicts,
     "bcr": both / len(rows)},
    sys.stdout,
    indent=1,
)
sys.stdout.write("\n")
