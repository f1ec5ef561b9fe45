// Text from outside (a bundle's member names and slug, a spec's strings) as it may reach a terminal: control
// characters, escape sequences and direction overrides are shown as escapes, so that no input can move the
// cursor, clear the screen or draw a line of its own (a fake verdict above the real one).
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same but tabs and newlines, which a message of medbench's own holds. */
const HIDDEN_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (char: string) => {
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
};

/** One value shown as it is, every hidden character (a newline too) escaped: `\x1b`, `\u202e`. */
export function visible(text: string): string {
  return text.replace(HIDDEN, escaped);
}

/** A message medbench wrote, its own newlines and indents kept, anything else hidden escaped. */
export function visibleLines(text: string): string {
  return text.replace(HIDDEN_IN_TEXT, escaped);
}

/** JSON text safe on a terminal: JSON.stringify leaves DEL, C1 controls and direction overrides raw inside
 *  strings; written as \u escapes, the value parsed back is the same. */
export function visibleJson(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
