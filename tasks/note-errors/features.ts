// The conjunction baseline's features: scikit-learn's default word analyzer (lower case, token pattern
// (?u)\b\w\w+\b, n-grams joined by one space) for 1-2 grams, plus each word conjoined with the note's header
// code. JavaScript's \w and \b are ASCII-only even with the u flag, so Python's \w is spelled with Unicode
// classes: str.isalnum() (letters L*, numbers Nd/Nl/No) or "_". A match of \b\w\w+\b is then exactly a
// maximal run of such characters of length two or more.

const WORD_RUN = /[\p{L}\p{N}_]{2,}/gu;

/** CountVectorizer().build_tokenizer() after its default preprocessor (str.lower). */
export function sklearnTokens(text: string): string[] {
  return text.toLowerCase().match(WORD_RUN) ?? [];
}

/** CountVectorizer(ngram_range=(lo, hi)).build_analyzer(): every n-gram for n = lo … hi, in that order. */
export function wordNgrams(tokens: string[], lo = 1, hi = 2): string[] {
  const out: string[] = [];
  for (let gramSize = lo; gramSize <= hi; gramSize++)
    for (let i = 0; i + gramSize <= tokens.length; i++) out.push(tokens.slice(i, i + gramSize).join(" "));
  return out;
}

/** The conjoined feature of a word and a header code (no token holds "=" or ":", so no n-gram collides). */
export const conjoined = (code: string, word: string) => `hc=${code}:${word}`;

export function noteFeatures(note: string, headerCode: string): string[] {
  const tokens = sklearnTokens(note);
  return [...wordNgrams(tokens, 1, 2), ...tokens.map((word) => conjoined(headerCode, word))];
}

/** Python's sorted() on str: by code point (JavaScript's default sort compares UTF-16 units). */
export function codePointCompare(left: string, right: string): number {
  const leftPoints = [...left],
    rightPoints = [...right];
  for (let i = 0; i < Math.min(leftPoints.length, rightPoints.length); i++) {
    const leftPoint = leftPoints[i]!.codePointAt(0)!,
      rightPoint = rightPoints[i]!.codePointAt(0)!;
    if (leftPoint !== rightPoint) return leftPoint - rightPoint;
  }
  return leftPoints.length - rightPoints.length;
}

export interface Sparse {
  rows: number;
  cols: number;
  indptr: Int32Array;
  indices: Int32Array;
  data: Float64Array;
}

/** A vocabulary (sorted by code point, as CountVectorizer sorts it) and the count matrix of the
 *  documents. */
export function fitVocabulary(docs: string[][]): string[] {
  const set = new Set<string>();
  for (const doc of docs) for (const feature of doc) set.add(feature);
  return [...set].sort(codePointCompare);
}

export function countMatrix(docs: string[][], vocab: string[]): Sparse {
  const index = new Map(vocab.map((feature, i) => [feature, i]));
  const indptr = new Int32Array(docs.length + 1);
  const idx: number[] = [];
  const val: number[] = [];
  docs.forEach((doc, row) => {
    const counts = new Map<number, number>();
    for (const feature of doc) {
      const column = index.get(feature);
      if (column !== undefined) counts.set(column, (counts.get(column) ?? 0) + 1);
    }
    for (const [column, count] of [...counts].sort((left, right) => left[0] - right[0])) {
      idx.push(column);
      val.push(count);
    }
    indptr[row + 1] = idx.length;
  });
  return {
    rows: docs.length,
    cols: vocab.length,
    indptr,
    indices: Int32Array.from(idx),
    data: Float64Array.from(val),
  };
}
