#!/usr/bin/env node
// Writes the SYNTHETIC note-errors sample (specs/note-errors/sample/pairs_{test,train}.jsonl): short Korean
// SOAP notes with English abbreviations, in the shape docs/protocols/note-errors.md assumes for the private
// pairs files. Not SYN-SNUH data and not built by the task's private rules: hand-written templates, 16 kept
// rules, the 8 test conditions, edits on the A, O and P lines. Deterministic (seedrandom with a fixed seed).
//   node scripts/make-note-errors-sample.mjs
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import seedrandom from "seedrandom";

const OUT = resolve(dirname(fileURLToPath(import.meta.url)), "../specs/note-errors/sample");
const LABEL = "medbench synthetic sample v1: not SYN-SNUH data, says nothing about any model";
const PER_RULE = { test: 4, train: 4 };

const CONDITIONS = {
  E11: { name: "제2형 당뇨병", dx: "T2DM", s: ["다음·다뇨 없음", "식이 조절 중", "체중 변화 없음"] },
  E78: { name: "이상지질혈증", dx: "Dyslipidemia", s: ["특이 증상 없음", "운동 주 3회", "식이 조절 중"] },
  F32: {
    name: "우울병 에피소드",
    dx: "Depressive episode",
    s: ["우울감 지속", "수면 장애 호소", "의욕 저하"],
  },
  I10: { name: "본태성 고혈압", dx: "HTN", s: ["두통 없음", "가정혈압 측정 중", "어지러움 없음"] },
  J30: {
    name: "알레르기 비염",
    dx: "Allergic rhinitis",
    s: ["콧물, 재채기 지속", "코막힘 호소", "눈 가려움"],
  },
  K29: {
    name: "만성 위염",
    dx: "Chronic gastritis",
    s: ["속쓰림 지속", "식후 상복부 불편감", "더부룩함 호소"],
  },
  M17: {
    name: "무릎 골관절염",
    dx: "Knee OA",
    s: ["우측 무릎 통증", "계단 오를 때 knee pain", "양측 무릎 뻣뻣함"],
  },
  M54: { name: "요통", dx: "LBP", s: ["허리 통증 지속", "오래 앉으면 back pain 악화", "요추부 뻐근함"] },
};
const DRUGS = {
  E11: ["metformin", "sitagliptin", "gliclazide"],
  E78: ["atorvastatin", "rosuvastatin", "pitavastatin"],
  F32: ["escitalopram", "sertraline", "fluoxetine"],
  I10: ["amlodipine", "losartan", "telmisartan"],
  J30: ["fexofenadine", "levocetirizine", "mometasone nasal spray"],
  K29: ["lansoprazole", "famotidine", "rebamipide"],
  M17: ["celecoxib", "aceclofenac", "acetaminophen"],
  M54: ["eperisone", "aceclofenac", "tramadol"],
};

// The 16 kept rules: category, condition, edited line, and how the two sides fill the edited span.
const RULES = {
  PH08: { category: "pharmacotherapy", cond: "K29", line: "P", wrong: ["escitalopram", "sertraline"] },
  PH09: { category: "pharmacotherapy", cond: "I10", line: "P", wrong: ["metformin", "gliclazide"] },
  PH12: { category: "pharmacotherapy", cond: "E11", line: "P", wrong: ["amlodipine", "losartan"] },
  PH13: { category: "pharmacotherapy", cond: "F32", line: "P", wrong: ["famotidine", "lansoprazole"] },
  PH14: { category: "pharmacotherapy", cond: "J30", line: "P", wrong: ["eperisone", "celecoxib"] },
  DX05: { category: "diagnosis", cond: "M17", line: "A" },
  DX06: { category: "diagnosis", cond: "M54", line: "A" },
  LI01: { category: "lab", cond: "E11", line: "A", lab: "hba1c", values: "high", says: "controlled" },
  LI02: { category: "lab", cond: "E11", line: "A", lab: "hba1c", values: "target", says: "uncontrolled" },
  LI03: { category: "lab", cond: "I10", line: "A", lab: "bp", values: "high", says: "controlled" },
  LI04: { category: "lab", cond: "I10", line: "A", lab: "bp", values: "target", says: "uncontrolled" },
  LI05: { category: "lab", cond: "E78", line: "A", lab: "ldl", values: "high", says: "controlled" },
  LI06: { category: "lab", cond: "E11", line: "O", lab: "hba1c", says: "controlled" },
  LI07: { category: "lab", cond: "E11", line: "O", lab: "fpg", says: "controlled" },
  LI08: { category: "lab", cond: "I10", line: "O", lab: "bp", says: "controlled" },
  LI09: { category: "lab", cond: "E78", line: "O", lab: "ldl", says: "controlled" },
};

const CONTROL = {
  E11: {
    controlled: ["혈당 조절 양호", "혈당 잘 조절됨"],
    uncontrolled: ["혈당 조절 불량", "혈당 조절 안 됨"],
  },
  I10: { controlled: ["혈압 조절 양호", "BP 잘 조절됨"], uncontrolled: ["혈압 조절 불량", "BP 조절 안 됨"] },
  E78: { controlled: ["LDL 목표 도달", "LDL 조절 양호"], uncontrolled: ["LDL 목표 미달", "LDL 조절 불량"] },
};

function makeRng(seed) {
  const r = seedrandom(seed);
  return {
    pick: (xs) => xs[Math.floor(r() * xs.length)],
    int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)),
    num: (lo, hi, d = 1) => (lo + r() * (hi - lo)).toFixed(d),
  };
}

function labValue(rng, lab, level) {
  const high = level === "high";
  switch (lab) {
    case "hba1c":
      return `HbA1c ${high ? rng.num(8.6, 10.2) : rng.num(6.0, 6.7)}%`;
    case "fpg":
      return `FPG ${high ? rng.int(185, 240) : rng.int(96, 124)} mg/dL`;
    case "bp":
      return (
        `BP ${high ? rng.int(156, 172) : rng.int(116, 128)}/` +
        `${high ? rng.int(96, 104) : rng.int(72, 80)}`
      );
    case "ldl":
      return `LDL ${high ? rng.int(168, 205) : rng.int(62, 88)} mg/dL`;
  }
  throw new Error(lab);
}

/** One pair: the source note with one placeholder span, filled with the error and the twin text. */
function makePair(rng, ruleId, split, index) {
  const rule = RULES[ruleId];
  const cond = rule.cond;
  const c = CONDITIONS[cond];
  const header = `#${cond} ${c.name}`;
  const S = `S: ${rng.pick(c.s)}, ${rng.pick(["지난 방문 이후 큰 변화 없음", "약 복용 순응도 양호", "2주 전부터"])}.`;
  const baseLab = cond === "E11" ? "hba1c" : cond === "I10" ? "bp" : cond === "E78" ? "ldl" : null;
  const vitals = cond === "I10" ? "" : `BP ${rng.int(116, 132)}/${rng.int(70, 84)}, `;
  const vital = () => `HR ${rng.int(62, 84)}, BT 36.${rng.int(4, 8)}`;
  let O = `O: ${vitals}${baseLab ? labValue(rng, baseLab, "target") : vital()}.`;
  let A = `A: ${c.dx}, ${rng.pick(["증상 지속", "경과 관찰 중", "상태 유지"])}.`;
  const drug = rng.pick(DRUGS[cond]);
  const fu = rng.pick(["2주 후 f/u", "4주 후 f/u", "3개월 후 f/u"]);
  let P = `P: ${drug} 유지, ${fu}.`;
  let err, twin;
  const PH = "\u0000"; // the placeholder span
  if (rule.category === "pharmacotherapy") {
    err = rng.pick(rule.wrong);
    twin = rng.pick(DRUGS[cond].filter((d) => d !== drug));
    P = `P: ${PH} 유지, ${fu}.`;
  } else if (rule.category === "diagnosis") {
    if (ruleId === "DX05") {
      err = rng.pick(["Lumbar strain", "LBP"]);
      twin = rng.pick(["Primary knee OA", "Knee osteoarthritis"]);
    } else {
      err = rng.pick(["Knee OA, both", "Primary knee OA"]);
      twin = rng.pick(["Lumbago", "Lumbar strain"]);
    }
    A = `A: ${PH}, ${rng.pick(["증상 지속", "통증 악화"])}.`;
  } else if (rule.line === "A") {
    // LI01-LI05: the values stay, the control statement is edited against them
    const values = labValue(rng, rule.lab, rule.values);
    O = `O: ${cond === "I10" ? "" : vitals}${values}.`;
    const wrongSays = rule.says;
    const rightSays = wrongSays === "controlled" ? "uncontrolled" : "controlled";
    err = rng.pick(CONTROL[cond][wrongSays]);
    twin = rng.pick(CONTROL[cond][rightSays]);
    A = `A: ${c.dx}, ${PH}.`;
  } else {
    // LI06-LI09: the control statement stays, the values are edited against it
    A = `A: ${c.dx}, ${rng.pick(CONTROL[cond].controlled)}.`;
    err = labValue(rng, rule.lab, "high");
    twin = labValue(rng, rule.lab, "target");
    const rest = rule.lab === "bp" ? "" : cond === "I10" ? "" : vitals;
    O = `O: ${rest}${PH}.`;
  }
  const template = [header, S, O, A, P].join("\n");
  const at = template.indexOf(PH);
  const error_note = template.replace(PH, err);
  const clean_note = template.replace(PH, twin);
  const pair_id = createHash("sha256")
    .update(`medbench-sample\0${split}\0${ruleId}\0${index}`)
    .digest("hex");
  return {
    pair_id: pair_id.slice(0, 16),
    category: rule.category,
    rule: ruleId,
    condition: cond,
    header_code: cond,
    edited_line: rule.line,
    error_note,
    clean_note,
    edits: [
      {
        line: rule.line,
        error_text: err,
        clean_text: twin,
        error_start: at,
        error_end: at + err.length,
        clean_start: at,
        clean_end: at + twin.length,
      },
    ],
    item_check_exposed: split === "test" && index % 4 === 1,
    synthetic: true,
    sample: LABEL,
  };
}

mkdirSync(OUT, { recursive: true });
for (const split of ["test", "train"]) {
  const rng = makeRng(`medbench-note-errors-sample-v1/${split}`);
  const pairs = [];
  for (let i = 0; i < PER_RULE[split]; i++)
    for (const ruleId of Object.keys(RULES)) pairs.push(makePair(rng, ruleId, split, i));
  writeFileSync(resolve(OUT, `pairs_${split}.jsonl`), pairs.map((p) => JSON.stringify(p)).join("\n") + "\n");
  console.log(`${split}: ${pairs.length} pairs`);
}
