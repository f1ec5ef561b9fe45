// Whether the model a reply names is the model asked for. Providers name the snapshot that served an alias
// (OpenAI: gpt-4o -> gpt-4o-2024-08-06) or drop a gateway's vendor prefix; anything else is another model,
// which a gateway may substitute without a word (docs/model-requests.md, "The served model").

// A date or version a provider appends to the name asked for: -2024-08-06, -20241022, -0613, -v2, -001,
// @20240229, :latest.
const SUFFIX = /^[-@:](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|v?\d+(?:\.\d+)*|latest)$/;

/** The name without a vendor prefix (openai/gpt-4o -> gpt-4o), lower-cased. */
const bare = (name: string): string => name.slice(name.lastIndexOf("/") + 1).toLowerCase();

/** True when `served` names `asked`: the same name, or it with a date or version appended. */
export function servesAsked(asked: string, served: string): boolean {
  const wanted = asked.toLowerCase();
  const named = served.toLowerCase();
  if (named === wanted) return true;
  // Compared without a vendor prefix only when the reply gives none (a gateway's slug against a bare name).
  const base = named.includes("/") ? wanted : bare(wanted);
  return named.startsWith(base) && SUFFIX.test(named.slice(base.length));
}
