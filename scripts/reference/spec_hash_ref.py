#!/usr/bin/env python3
"""Random task documents and their spec_hash by the published recipe (docs/reference/spec-hash.md):
sha256(utf8(json.dumps(spec without top-level title/preview/visibility, sort_keys=True,
separators=(",", ":"), ensure_ascii=False))), the spec read by json.loads from the document's text.
No code copied: the recipe is the standard library's. Documents hold floats (any bit pattern, NaN,
Infinity, written in several forms), big integers, astral and high-BMP keys, Korean, control characters,
`__proto__`; a few hold a lone surrogate, which the recipe cannot encode (expected: an error).
Run: python3 scripts/reference/spec_hash_ref.py > tests/data/golden/fidelity/spec-hash.json"""
import hashlib, json, math, random, struct, sys

rng = random.Random(20261203)
KEYS = ["a", "b", "B", "", "title", "preview", "visibility", "__proto__", "constructor", "toString", "1",
        "10",
        "수술", "로봇 팔", "\uffff", "\ufffd", "\ue000", "\U0001f600", "\U00010000", "\U0010ffff", "é", "e\u0301",
        "tab\tkey", "nl\nkey", "\x00", "\x1f", "\x7f", "\u2028", "\u0085", "quote\"", "back\\slash"]
CHARS = ["a", "Z", " ", "한", "국", "어", "\u00a0", "\u2029", "\x01", "\x08", "\x0c", "\x1b", "\ufeff",
         "\U0001f3e5",
         "\ud7a3", "\uffee", "/", "\\", "\"", "<", "&", "\u0300"]


def rand_float():
    r = rng.random()
    if r < 0.1:
        return rng.choice(
            [0.0, -0.0, 1.0, 100.0, 1e16, 1e-5, 2.5e-7, 0.1, 1e22, 5e-324, 1.7976931348623157e308]
        )
    if r < 0.15:
        return rng.choice([math.nan, math.inf, -math.inf])
    if r < 0.5:
        return rng.uniform(-1e6, 1e6)
    while True:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            return x


def rand_str(n=8):
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, n)))


def rand_value(depth):
    r = rng.random()
    if depth > 3 or r < 0.5:
        k = rng.randint(0, 6)
        if k == 0: return rand_float()
        if k == 1: return rng.choice([0, -1, 7, 2**53 + 1, -(2**64), 10**30 + 7, rng.getrandbits(100)])
        if k == 2: return rng.choice([True, False, None])
        return rand_str()
    if r < 0.75:
        return [rand_value(depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS) + (rand_str(2) if rng.random() < 0.3 else ""): rand_value(depth + 1)
            for _ in range(rng.randint(0, 5))}


def write(v, ascii_):
    """JSON text with varied layout: numbers in other forms Python reads as the same value."""
    ws = lambda: rng.choice(["", " ", "\n  ", "\t"])
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v) or v == 0 or rng.random() < 0.6:
            return json.dumps(v)
        return rng.choice(["%.17e", "%.17E", "%r"]) % v if rng.random() < 0.5 else repr(v)
    if isinstance(v, (bool, int)) or v is None or isinstance(v, str):
        return json.dumps(v, ensure_ascii=ascii_)
    if isinstance(v, list):
        return "[" + ",".join(ws() + write(x, ascii_) for x in v) + ws() + "]"
    return "{" + ",".join(ws() + json.dumps(k, ensure_ascii=ascii_) + ws() + ":" + ws() + write(x, ascii_)
                          for k, x in v.items()) + ws() + "}"


def recipe(text):
    spec = json.loads(text)["spec"]
    stripped = {k: v for k, v in spec.items() if k not in ("title", "preview", "visibility")}
    s = json.dumps(stripped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


cases = []
for i in range(300):
    spec = {rng.choice(KEYS): rand_value(1) for _ in range(rng.randint(1, 6))}
    text = write({"slug": "t", "version": 1, "spec": spec}, ascii_=rng.random() < 0.5)
    cases.append({"text": text, "spec_hash": recipe(text)})
for text in ['{"spec":{"__proto__":1}}', '{"spec":{}}',
             '{"spec": {"a": {"__proto__": {"x": NaN}}, "b": [Infinity, -Infinity]}}',
             '{"spec": {"x": NaN, "title": "t", "n": {"title": 1.50}}}']:
    cases.append({"text": text, "spec_hash": recipe(text)})
for text in ['{"spec": {"a": "\\ud800"}}', '{"spec": {"\\udfff": 1}}', '{"spec": {"x": ["ok", "\\ud83d x"]}}',
             '{"spec": {"a": {"b": "\\ude00\\ud83d"}}}']:
    try:
        recipe(text)
        raise SystemExit("expected the recipe to fail on " + text)
    except UnicodeEncodeError:
        cases.append({"text": text, "error": "UnicodeEncodeError"})
json.dump({"python": sys.version.split()[0], "cases": cases}, sys.stdout, ensure_ascii=True, indent=1)
print()
