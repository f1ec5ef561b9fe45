// Whether the model a reply names is the model asked for. Providers name the snapshot that served an alias
// (OpenAI: gpt-4o -> gpt-4o-2024-08-06), drop a gateway's vendor prefix or add one (vLLM serving a Hugging
// Face repository: Qwen/qwen3-8b); anything else is another model,
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
  // Compared without vendor prefixes unless both give one (a gateway's slug against a bare name, or a bare
  // name asked of a server that names the vendor: Qwen/qwen3-8b for qwen3-8b); two vendors differ.
  const both = named.includes("/") && wanted.includes("/");
  const [base, name] = both ? [wanted, named] : [bare(wanted), bare(named)];
  return name === base || (name.startsWith(base) && SUFFIX.test(name.slice(base.length)));
}
