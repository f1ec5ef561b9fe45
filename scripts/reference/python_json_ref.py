#!/usr/bin/env python3
"""Expected results of Python's json.loads (CPython 3.11, C scanner) for the texts medbench's port
(src/util/python-json.ts) must read the same way: value, or the error message and position.
No code copied: this calls the standard library. Output: tests/data/golden/fidelity/python-json.json
Run: python3 scripts/reference/python_json_ref.py > tests/data/golden/fidelity/python-json.json"""
import json, math, sys

def enc(v):
    if v is None: return ["null"]
    if isinstance(v, bool): return ["bool", v]
    if isinstance(v, int): return ["int", str(v)]
    if isinstance(v, float):
        return ["float", "nan" if math.isnan(v) else repr(v)]
    if isinstance(v, str): return ["str", v]
    if isinstance(v, list): return ["list", [enc(x) for x in v]]
    return ["dict", [[k, enc(x)] for k, x in v.items()]]

CASES = [
    '{"a": 1}', '{"a": 1.0}', '{"a": -0}', '{"a": -0.0}', '{"a": 1e400}', '{"a": 12345678901234567890}',
    '{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '[NaN, -Infinity, Infinity]', 'NaN', '-Infinity',
    '{"a": nan}', '{"a": inf}', '{"a": -NaN}', '{"a": +1}', '{"a": 01}', '{"a": 1.}', '{"a": .5}',
    '{"a": 1e}',
    '{"a": 1E+2}', '{"a": -}', '{"a": 0x10}', '{"a": "x"', '{"a": "x}', '{"a" 1}', '{a: 1}', "{'a': 1}",
    '{"a": 1,}', '[1,]', '[1 2]', '{"a": 1 "b": 2}', '{"a": {"b": 1}', '{"a": [1, 2}', '{"a": 1}}',
    '{"a": 1} x',
    '', ' ', '{', '[', '{"a":', '{"a"', '"abc', '"a\\qb"', '"a\\u12"', '"a\\u12G4"', '"\\ud800"',
    '"\\udc00x"',
    '"\\ud83d\\ude00"', '"\\ud83d\\u0041"', '"\\ud83d\\uzzzz"', '"tab\there"', '"nl\nhere"', '"del\x7fok"',
    '"\\/\\b\\f\\n\\r\\t"', '\ufeff{}', '{"a": 1, "a": 2}', '{"__proto__": {"x": 1}}',
    '{"1": 1, "0": 0, "b": 2}',
    '  {"a" : [ true , false , null ] }  ', '{"a": tru}', '{"a": True}', '{"a": null1}', '{"a": 1}\n',
    '{"a": "\u2028\u00e9\ud55c"}', '{"accuracy": {"score": 4, "explanation": "x"}',
    '{"accuracy": {"score": 4, "explanation": "x"}, "clarity": {"score": 3 "explanation": "y"}}',
    '{"accuracy": {"score": 4, "explanation": "say "hi""}}',
    '{"accuracy": {"score": "4", "explanation": "x",}}',
    '{"a": [1, 2, 3]]', '[{"a": 1}, {"b": 2}]', '{"a":' + '1' * 4301 + '}', '{"a":' + '1' * 4300 + '}',
    '{"a": -' + '1' * 4301 + '}', '{"a": 1.' + '1' * 5000 + '}',
]

out = []
for text in CASES:
    try:
        out.append({"text": text, "value": enc(json.loads(text))})
    except json.JSONDecodeError as e:
        out.append({"text": text, "error": {"msg": e.msg, "pos": e.pos}})
    except ValueError as e:
        out.append({"text": text, "error": {"int_limit": True}})
json.dump({"python": sys.version.split()[0], "cases": out}, sys.stdout, ensure_ascii=True, indent=1)
print()
