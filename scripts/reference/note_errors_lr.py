#!/usr/bin/env python3
"""Fixture for the note-errors conjunction baseline, from scikit-learn (run once; the output is committed).

    /usr/bin/python3 scripts/reference/note_errors_lr.py > tests/data/note-errors/lr-fixture.json
    npx prettier --write tests/data/note-errors/lr-fixture.json

Debian's python3-sklearn (apt-get install -y python3-sklearn). Reads the synthetic sample
(specs/note-errors/sample/pairs_*.jsonl) and writes: scikit-learn's tokens for a list of Korean and mixed
strings; the vocabulary of word 1-2 grams plus each word conjoined with the note's header code; the
coefficients and intercept of LogisticRegression(C=10) fitted to convergence (newton-cholesky at tol 1e-12,
the gradient at the solution recorded; lbfgs's distance from it recorded too); the train-median threshold;
scores and predictions.
"""
import json
import sys
from pathlib import Path

import numpy as np
import sklearn
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "specs" / "note-errors" / "sample"

TOKEN_CASES = [
    "P: famotidine 유지, 2주 후 f/u.",
    "O: BP 130/80, HbA1c 7.8%, FPG 126 mg/dL.",
    "A: T2DM, 혈당 조절 양호.",
    "#M17 무릎 골관절염",
    "eGFR_60 a b 가 나다 x1 1x",
    "Café CAFÉ cafe\u0301 naïve",
    "①② Ⅻ x² ３４ ＡＢ ﾊﾝｶｸ",
    "中文测试 日本語テスト 한국어테스트",
    "tab\there\nnew-line — dash·dot",
    "İstanbul ǅemal ß",
]

tokenize = CountVectorizer().build_analyzer()  # lower case, default token pattern, unigrams
bigram = CountVectorizer(ngram_range=(1, 2)).build_analyzer()


def features(note, code):
    words = tokenize(note)
    return bigram(note) + [f"hc={code}:{w}" for w in words]


def read(split):
    rows = [json.loads(l) for l in (SAMPLE / f"pairs_{split}.jsonl").read_text().splitlines() if l.strip()]
    docs, y = [], []
    for r in rows:
        docs += [features(r["error_note"], r["header_code"]), features(r["clean_note"], r["header_code"])]
        y += [1, 0]
    return docs, np.array(y)


train_docs, y_train = read("train")
test_docs, _ = read("test")
vec = CountVectorizer(analyzer=lambda d: d)
X_train = vec.fit_transform(train_docs)
X_test = vec.transform(test_docs)
# newton-cholesky reaches a gradient of ~1e-9 here; lbfgs stops far earlier even at tol 1e-12 (its line
# search gives up), so it is fitted only to record how far the default solver lands from the optimum.
m = LogisticRegression(C=10, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X_train, y_train)
lbfgs = LogisticRegression(C=10, solver="lbfgs", tol=1e-12, max_iter=100000).fit(X_train, y_train)
disagreement = float(np.max(np.abs(lbfgs.coef_ - m.coef_)))
z = X_train @ m.coef_[0] + m.intercept_[0]
r = 10 * (1 / (1 + np.exp(-z)) - y_train)
gradient = float(max(np.abs(m.coef_[0] + X_train.T @ r).max(), abs(r.sum())))
train_scores = m.decision_function(X_train)
test_scores = m.decision_function(X_test)
threshold = float(np.median(train_scores))
json.dump(
    {
        "made_by": "scripts/reference/note_errors_lr.py",
        "versions": {
            "sklearn": sklearn.__version__, "numpy": np.__version__, "python": sys.version.split()[0]
        },
        "tokens": [{"text": t, "tokens": tokenize(t), "ngrams": bigram(t)} for t in TOKEN_CASES],
        "vocabulary": list(vec.get_feature_names_out()),
        "C": 10,
        "coef": [float(x) for x in m.coef_[0]],
        "intercept": float(m.intercept_[0]),
        "solver": "newton-cholesky, tol 1e-12",
        "gradient_max_abs": gradient,
        "lbfgs_max_abs_coef_difference": disagreement,
        "threshold": threshold,
        "train_scores": [float(x) for x in train_scores],
        "test_scores": [float(x) for x in test_scores],
        "test_predictions": [int(s > threshold) for s in test_scores],
    },
    sys.stdout,
    ensure_ascii=False,
    indent=1,
)
sys.stdout.write("\n")
