#!/usr/bin/env python3
"""Expected values for medbench's MTSamples Replicate port, from the reference code run once.

Copied functions (package imports stubbed: no helm, verifiers, datasets or medarc_verifiers import; each
copy is marked with where it came from, bodies unchanged unless a comment says otherwise):
- stanford-crfm/helm @ 63754d05db6f874e41a395880fb573890a13e791
    src/helm/benchmark/scenarios/mtsamples_replicate_scenario.py  extract_sections, remove_plan_section,
        the body of get_instances' loop
    src/helm/benchmark/annotation/model_as_judge.py  _sanitize_model_response, _interpolate_prompt,
        _validate_annotation, the reply handling of _annotate_with_model
    src/helm/benchmark/metrics/llm_jury_metrics.py  LLMJuryMetric.evaluate_generation (default_score 1.0,
        as run_specs/medhelm_run_specs.py sets it for mtsamples_replicate)
- MedARC-AI/med-lm-envs
    environments/mtsamples_replicate/mtsamples_replicate/mtsamples_replicate.py
    @ fc4064b990eab9dde8dc565feb130df9da746ead
        _extract_sections, _remove_plan_section, _load_dataset's loop, reward_mtsamples' loop
    medarc_verifiers/parsers/json_parser.py @ 7117e3aee24c571f806002119f5f6f8d897f0418  _extract_json_object,
        _strip_strings
    medarc_verifiers/rewards/normalize_helm_reward.py @ 3172efc41e1fb994c25a82f8745992961dfef391
    medarc_verifiers/judging/multi_judge.py @ 0db78804f70524dae3100e39c5bab3ca0f4a2457  MultiJudge.mean
- PrimeIntellect-ai/verifiers verifiers/rubrics/rubric.py: a reward function that raises is logged
  ("Error calling reward function") and scored 0.0; reproduced by the try/except in medarc_reward.

Run: python3 scripts/reference/mtsamples_ref.py tests/data/mtsamples_processed \
       > tests/data/golden/fidelity/mtsamples.json
"""
import hashlib
import json
import os
import sys
from string import Template
from typing import Any

import re

# ---------------------------------------------------------------- HELM scenario (copied)
def helm_extract_sections(text: str) -> tuple:
    plan, summary, findings = None, None, None
    text_upper = text.upper()
    if "PLAN:" in text_upper:
        plan = text.split("PLAN:")[1].split("\n", 1)[0].strip()
    if "SUMMARY:" in text_upper:
        summary = text.split("SUMMARY:")[1].split("\n", 1)[0].strip()
    if "FINDINGS:" in text_upper:
        findings = text.split("FINDINGS:")[1].split("\n", 1)[0].strip()
    return plan, summary, findings


def helm_remove_plan_section(text: str) -> str:
    sections = ["PLAN:"]
    for section in sections:
        if section in text:
            text = text.split(section)[0].strip()  # Keep content before PLAN
    return text


def helm_instance(file_path):
    # get_instances' loop body; the file is read as HELM reads it
    try:
        with open(file_path, "r", encoding="utf-8") as f:
            text_content = f.read().strip()
        plan, summary, findings = helm_extract_sections(text_content)
        reference_text = plan or summary or findings
        if not reference_text:
            return None
        cleaned_text = helm_remove_plan_section(text_content)
        return {"input": cleaned_text, "reference": reference_text}
    except Exception as e:
        return {"error": type(e).__name__}


# ---------------------------------------------------------------- MedARC environment (copied)
def medarc_extract_sections(text: str):
    plan, summary, findings = None, None, None
    text_upper = text.upper()
    if "PLAN:" in text_upper:
        idx = text_upper.find("PLAN:")
        after_header = text[idx + len("PLAN:") :]
        first_line = after_header.split("\n", 1)[0].strip()
        plan = first_line if first_line else None
    if "SUMMARY:" in text_upper:
        idx = text_upper.find("SUMMARY:")
        after_header = text[idx + len("SUMMARY:") :]
        first_line = after_header.split("\n", 1)[0].strip()
        summary = first_line if first_line else None
    if "FINDINGS:" in text_upper:
        idx = text_upper.find("FINDINGS:")
        after_header = text[idx + len("FINDINGS:") :]
        first_line = after_header.split("\n", 1)[0].strip()
        findings = first_line if first_line else None
    return plan, summary, findings


def medarc_remove_plan_section(text: str) -> str:
    sections = ["PLAN:"]
    for section in sections:
        if section in text.upper():
            idx = text.upper().find(section)
            text = text[:idx].strip()
    return text


def medarc_instance(txt_file):
    # _load_dataset's loop body (Path.read_text -> open(..., encoding="utf-8").read(), the same call)
    with open(txt_file, encoding="utf-8") as f:
        text = f.read()
    plan, summary, findings = medarc_extract_sections(text)
    reference = None
    extracted_section = None
    if plan:
        reference = plan
        extracted_section = "PLAN"
    elif summary:
        reference = summary
        extracted_section = "SUMMARY"
    elif findings:
        reference = findings
        extracted_section = "FINDINGS"
    if not reference:
        return None
    input_text = medarc_remove_plan_section(text)
    return {"input": input_text, "reference": reference, "source": extracted_section}


# ---------------------------------------------------------------- HELM judge prompt (copied, adapted)
def helm_interpolate(template: str, replacements: dict) -> str:
    # _interpolate_prompt with medbench's placeholder names in place of QUESTION/RESPONSE/GOLD_RESPONSE
    tmpl_text = template
    tmpl_text = (
        tmpl_text.replace("{patient_information}", "$patient_information")
        .replace("{response}", "$response")
        .replace("{gold_response}", "$gold_response")
    )
    return Template(tmpl_text).substitute(replacements)


# ---------------------------------------------------------------- HELM annotator and jury metric (copied)
ANNOTATION_CRITERIA = {
    "accuracy": {"score", "explanation"},
    "completeness": {"score", "explanation"},
    "clarity": {"score", "explanation"},
}


def helm_sanitize(model_response: str) -> str:
    json_match = re.search(r"\{.*\}", model_response, re.DOTALL)
    return json_match.group(0) if json_match else model_response


def helm_validate(annotator_criteria) -> bool:
    for key, value in ANNOTATION_CRITERIA.items():
        if key not in annotator_criteria:
            return False
        for subkey in value:
            if subkey not in annotator_criteria[key]:
                return False
    return True


def helm_annotation(text: str):
    # _annotate_with_model after the request; hwarn calls dropped
    try:
        annotator_output = helm_sanitize(text)
        try:
            annotator_criteria = json.loads(annotator_output)
        except json.JSONDecodeError as e:
            if e.msg == "Expecting ',' delimiter":
                annotator_output = annotator_output + "}"
                try:
                    annotator_criteria = json.loads(annotator_output)
                except Exception:
                    return None
            else:
                return None
        if not helm_validate(annotator_criteria):
            return None
        return annotator_criteria
    except Exception:
        return None


def helm_jury(annotations: list, default_score: float = 1.0):
    # evaluate_generation over the judges' annotations (None: a judge whose annotation failed)
    scores = []
    score = default_score
    for annotation_dict in annotations:
        if annotation_dict is not None:
            for val in annotation_dict.values():
                scores.append(int(val["score"]))
    if scores:
        score = sum(scores) / len(scores)
    return score, scores


# ---------------------------------------------------------------- MedARC judge reading (copied)
def medarc_extract_json_object(text: str):
    last_close = text.rfind("}")
    if last_close == -1:
        return None
    opening_indices = [idx for idx, ch in enumerate(text[: last_close + 1]) if ch == "{"]
    if not opening_indices:
        return None
    for open_idx in reversed(opening_indices):
        candidate = text[open_idx : last_close + 1]
        try:
            parsed = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            return parsed
    return None


def medarc_strip_strings(value):
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return {key: medarc_strip_strings(val) for key, val in value.items()}
    if isinstance(value, list):
        return [medarc_strip_strings(item) for item in value]
    return value


def medarc_parse(text: str):
    # JSONParser.parse(text, strip=True) with no model and the identity extract_fn
    obj = medarc_extract_json_object(text)
    if obj is None:
        return None
    return medarc_strip_strings(obj)


def _coerce_score(value: Any):
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        cleaned = value.strip()
        if not cleaned:
            return None
        try:
            return float(cleaned)
        except ValueError:
            return None
    return None


def normalize_helm_reward(scores, *, dimensions, min_score: float = 1.0, max_score: float = 5.0) -> float:
    if not dimensions:
        return 0.0
    denom = max_score - min_score
    if denom <= 0:
        return 0.0
    accumulated = 0.0
    count = 0
    for dimension in dimensions:
        score = _coerce_score(scores.get(dimension, {}).get("score"))
        if score is None:
            continue
        clamped = max(min_score, min(max_score, score))
        accumulated += (clamped - min_score) / denom
        count += 1
    if count == 0:
        return 0.0
    return max(0.0, min(1.0, accumulated / count))


JUDGE_DIMENSIONS = ("accuracy", "completeness", "clarity")


def multi_judge_mean(scores):
    valid = [score for score in scores if score is not None]
    if not valid:
        return 0.0
    return sum(valid) / len(valid)


def medarc_judge_score(raw):
    # one judge of reward_mtsamples' loop (raw None: the judge call failed)
    parsed = medarc_parse(str(raw))
    if parsed is None:
        parsed = {
            dimension: {"score": None, "explanation": None, "raw": None} for dimension in JUDGE_DIMENSIONS
        }
    normalized = normalize_helm_reward(parsed, dimensions=JUDGE_DIMENSIONS)
    return normalized if raw is not None else None


def medarc_reward(raws):
    try:  # verifiers' Rubric: a reward function that raises scores 0.0
        scores = [medarc_judge_score(raw) for raw in raws]
        return multi_judge_mean(scores)
    except Exception:
        return 0.0


# ---------------------------------------------------------------- cases
def sha(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def crit(a, b, c, extra=""):
    return (
        '{"accuracy": {"score": %s, "explanation": "a"}, "completeness": {"score": %s, "explanation": "b"}, '
        '"clarity": {"score": %s, "explanation": "c"}%s}' % (a, b, c, extra)
    )


REPLIES = [
    crit(4, 3, 5),
    crit(5, 5, 5, ', "overall": {"score": 2, "explanation": "o"}'),
    crit(4, 3, 5, ', "overall": 4'),
    crit(4, 3, 5, ', "summary": "fine"'),
    crit(4, 3, 5, ', "notes": {"explanation": "no score"}'),
    crit('"4"', '" 3 "', '"5"'),
    crit('"4.5"', 3, 5),
    crit('"four"', 3, 5),
    crit("null", 3, 5),
    crit("4.7", "2.2", "1.9"),
    crit("true", "false", 5),
    crit("NaN", 3, 5),
    crit("Infinity", 3, 5),
    crit("-Infinity", 3, 5),
    crit('"inf"', '"nan"', '"-inf"'),
    crit('"Infinity"', '"NaN"', '"1e1"'),
    crit('"1_0"', '"\\u0664"', '"\\uff15"'),
    crit(0, 7, -3),
    crit("1e400", 3, 5),
    crit("123456789012345678901234567890", 3, 5),
    crit("1" * 400, 3, 5),
    crit('"0x10"', '""', '"   "'),
    crit("[4]", '{"v": 4}', 5),
    '{"Accuracy": {"score": 4, "explanation": "a"}, "Completeness": {"score": 3, "explanation": "b"}, '
    '"Clarity": {"score": 5, "explanation": "c"}}',
    '{"accuracy": {"score": 4}, "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "c"}}',
    '{"accuracy": "score 4, explanation fine", "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "c"}}',
    '{"accuracy": ["score", "explanation"], "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "c"}}',
    '{"accuracy": 4, "completeness": 3, "clarity": 5}',
    '{"accuracy": null, "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "c"}}',
    '{"completeness": {"score": 3, "explanation": "b"}, "clarity": {"score": 5, "explanation": "c"}}',
    'Here is my evaluation:\n```json\n' + crit(4, 4, 4) + '\n```\nThanks {for reading}.',
    crit(2, 2, 2) + "\n\nA second try:\n" + crit(5, 5, 5),
    crit(3, 3, 3) + " and braces in prose } after it",
    crit(3, 3, 3)[:-1],
    crit(3, 3, 3)[:-1] + '\n"extra": 1',
    '{"accuracy": {"score": 4, "explanation": "a"}, "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "said "ok""}}',
    '{"accuracy": {"score": 4, "explanation": "a",}, "completeness": {"score": 3, "explanation": "b"}, '
    '"clarity": {"score": 5, "explanation": "c"}}',
    "no json at all",
    "",
    "5",
    '["accuracy", "completeness", "clarity"]',
    '"accuracy completeness clarity"',
    '{"accuracy": {"score": 4, "explanation": "a"}}',
    crit(4, 3, 5, ', "accuracy": {"score": 1, "explanation": "dup"}'),
    '<think>{"accuracy": 1}</think>' + crit(4, 3, 5),
    crit(4, 3, 5).replace('"a"', '"{\\"nested\\": true}"'),
    crit(4, 3, "5" * 4301),
]

# Instances: replies per judge (None: the judge call failed).
JURIES = [
    [REPLIES[0], REPLIES[1]],
    [REPLIES[0], None],
    [None, None],
    [REPLIES[0], REPLIES[2]],
    [REPLIES[27], REPLIES[0]],
    [REPLIES[37], REPLIES[38]],
    [REPLIES[23], REPLIES[0]],
    [REPLIES[9], REPLIES[10], REPLIES[14]],
    [REPLIES[6], REPLIES[0]],
]


def helm_reply(text):
    a = helm_annotation(text)
    if a is None:
        return {"valid": False}
    try:
        return {"valid": True, "scores": helm_jury([a])[1]}
    except Exception as e:
        return {"valid": True, "crash": type(e).__name__}


def medarc_reply(text):
    try:
        return {"score": medarc_judge_score(text)}
    except Exception as e:
        return {"crash": type(e).__name__}


def helm_instance_score(replies):
    anns = [helm_annotation(r) if r is not None else None for r in replies]
    try:
        return {"score": helm_jury(anns)[0]}
    except Exception as e:
        return {"crash": type(e).__name__}


def main(notes_dir):
    files = sorted(f for f in os.listdir(notes_dir) if f.endswith(".txt"))
    instances = {"helm": {}, "medarc": {}}
    for name in files:
        path = os.path.join(notes_dir, name)
        for variant, fn in (("helm", helm_instance), ("medarc", medarc_instance)):
            x = fn(path)
            if x is None:
                continue
            if "error" in x:
                instances[variant][name] = {"skipped": x["error"]}
                continue
            instances[variant][name] = {
                "input_sha256": sha(x["input"]),
                "input_ends_with_newline": x["input"].endswith("\n"),
                "reference": x["reference"],
            }
    template_path = os.path.join(os.path.dirname(__file__), "../../specs/mtsamples/prompts/judge.txt")
    with open(template_path, encoding="utf-8") as f:
        judge_template = f.read()
    tricky = [
        "{gold_response}", "{response}", "{patient_information}", "$response", "$$", "$&", "$1", "\\1 \\"
    ]
    fills = []
    for template in (judge_template, "A {response}\nB {gold_response}.C {patient_information}-D {response}"):
        for i, v in enumerate(tricky):
            values = {
                "patient_information": "note " + tricky[(i + 1) % len(tricky)],
                "response": "plan " + v,
                "gold_response": "gold " + tricky[(i + 2) % len(tricky)],
            }
            prompt = helm_interpolate(template, values)
            fills.append({"template": template, "values": values, "prompt": prompt})
    out = {
        "instances": instances,
        "fills": fills,
        "replies": [{"text": r, "helm": helm_reply(r), "medarc": medarc_reply(r)} for r in REPLIES],
        "juries": [
            {"replies": j, "helm": helm_instance_score(j), "medarc": {"score": medarc_reward(j)}}
            for j in JURIES
        ],
    }
    json.dump(out, sys.stdout, ensure_ascii=True, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
