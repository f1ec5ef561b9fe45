#!/usr/bin/env python3
"""Reference for metric statistics over resampled units (medbench's `statisticCi`): F1, precision and MCC of
paired rows, a percentile cluster bootstrap drawn as stats_ref.py draws (numpy default_rng / random.Random).
Writes tests/data/golden/stats/statistics.json: the rows and, per statistic and generator, point, lo, hi and
the number of resamples where the statistic is undefined. Run once: python3 scripts/reference/statistic_ref.py
"""
import json
import math
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from stats_ref import draws  # noqa: E402


def rows_of():
    # 40 pairs (units), two notes each: an error note (gold yes) and its clean twin (gold no);
    # the "model" flags by a fixed hash, so some resamples have no true positive.
    rows = []
    for p in range(40):
        for side, gold in (("error", 1), ("clean", 0)):
            h = (p * 7919 + (13 if gold else 5)) % 11
            flag = 1 if (h < 3 if gold else h < 2) else 0
            tp, fp = gold * flag, (1 - gold) * flag
            fn, tn = gold * (1 - flag), (1 - gold) * (1 - flag)
            rows.append({"id": f"{p}/{side}", "cluster": f"p{p}", "value": float(flag == gold),
                         "fields": {"tp": tp, "fp": fp, "fn": fn, "tn": tn}})
    return rows


def sums(rows):
    t = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for r in rows:
        for k in t:
            t[k] += r["fields"][k]
    return t


def f1(rows):
    s = sums(rows)
    d = 2 * s["tp"] + s["fp"] + s["fn"]
    return None if d == 0 else 2 * s["tp"] / d


def precision(rows):
    s = sums(rows)
    d = s["tp"] + s["fp"]
    return None if d == 0 else s["tp"] / d


def mcc(rows):
    s = sums(rows)
    tp, fp, fn, tn = s["tp"], s["fp"], s["fn"], s["tn"]
    d = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return None if d == 0 else (tp * tn - fp * fn) / d


def ci(rows, stat, rng, seed, resamples, level):
    order, members = [], {}
    for r in rows:
        if r["cluster"] not in members:
            members[r["cluster"]] = []
            order.append(r["cluster"])
        members[r["cluster"]].append(r)
    boot, undefined = [], 0
    for idx in draws(rng, seed, resamples, len(order)):
        v = stat([r for i in idx for r in members[order[i]]])
        if v is None:
            undefined += 1
        else:
            boot.append(v)
    lo = float(np.percentile(boot, 100 * (1 - level) / 2))
    hi = float(np.percentile(boot, 100 * (1 + level) / 2))
    return {"point": stat(rows), "lo": lo, "hi": hi, "undefined_resamples": undefined}


def main():
    rows = rows_of()
    cases = []
    for name, stat in (("f1", f1), ("precision", precision), ("mcc", mcc)):
        for rng in ("numpy", "python"):
            opts = {"rng": rng, "seed": 0, "resamples": 2000, "level": 0.95}
            cases.append({"statistic": name, **opts, **ci(rows, stat, **opts)})
    # 8 pairs, only the first one flagged: precision is undefined in resamples that miss it.
    sparse = [dict(r, fields=dict(r["fields"], tp=0, fn=1) if r["id"].endswith("error") else r["fields"])
              for r in rows[2:16]]
    sparse = rows[:2] + sparse
    for rng in ("numpy", "python"):
        opts = {"rng": rng, "seed": 0, "resamples": 2000, "level": 0.95}
        cases.append({"statistic": "precision", "rows": "sparse", **opts, **ci(sparse, precision, **opts)})
    out = Path(__file__).parents[2] / "tests/data/golden/stats/statistics.json"
    out.write_text(json.dumps({"rows": rows, "sparse": sparse, "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
