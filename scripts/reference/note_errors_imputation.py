#!/usr/bin/env python3
"""Fixture for the note-errors code's imputation (run once; the output is committed).

    python3 scripts/reference/note_errors_imputation.py > tests/data/note-errors/imputation-fixture.json
    npx prettier --write tests/data/note-errors/imputation-fixture.json

The authors' table code is not public; the page says it imputes a missing verdict at random, "asymmetrically,
fitted on the run itself". This script is that reading in CPython (each side's own flag rate; Python's random
seeded 42 afresh, 100 draws, pair by pair, error note before twin), so that the TypeScript port is checked
against CPython's Mersenne Twister and float arithmetic to the last bit. The pooled reading (one flag rate
over both sides), which medbench used before, is computed beside it for docs/protocols/note-errors.md.
"""
import json
import random
import sys

VERDICTS = ["Yes", "No", None]


def flag_rate(notes):
    judged = [v for v in notes if v is not None]
    return None if not judged else sum(v == "Yes" for v in judged) / len(judged)


def imputed_bcr(pairs, error_rate, twin_rate, draws=100, seed=42):
    rng = random.Random(seed)
    total = 0.0
    for _ in range(draws):
        both = 0
        for e, c in pairs:
            ev = e if e is not None else ("Yes" if rng.random() < error_rate else "No")
            cv = c if c is not None else ("Yes" if rng.random() < twin_rate else "No")
            both += ev == "Yes" and cv == "No"
        total += both / len(pairs)
    return total / draws


def case(pairs):
    errors = [e for e, _ in pairs]
    twins = [c for _, c in pairs]
    error_rate, twin_rate = flag_rate(errors), flag_rate(twins)
    side = imputed_bcr(
        pairs, 0.5 if error_rate is None else error_rate, 0.5 if twin_rate is None else twin_rate
    )
    pooled_rate = flag_rate(errors + twins)
    pooled = imputed_bcr(pairs, 0.5 if pooled_rate is None else pooled_rate,
                         0.5 if pooled_rate is None else pooled_rate)
    return {"pairs": pairs, "side_rates": side, "pooled_rate": pooled}


def main():
    maker = random.Random(7)
    cases = []
    for size, missing in [(4, 0.25), (12, 0.2), (40, 0.1), (40, 0.4), (120, 0.15)]:
        pairs = []
        for _ in range(size):
            # Error notes lean Yes and twins lean No, so the two sides' rates differ as in a real run.
            e = None if maker.random() < missing else ("Yes" if maker.random() < 0.8 else "No")
            c = None if maker.random() < missing else ("Yes" if maker.random() < 0.3 else "No")
            pairs.append([e, c])
        cases.append(case(pairs))
    cases.append(case([[None, None], [None, None]]))  # no verdict on either side: both rates 0.5
    json.dump({"made_by": "scripts/reference/note_errors_imputation.py", "python": sys.version.split()[0],
               "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
