// promptfoo's side of a benchmark: a folder with one test per request body medbench sent (its messages as a
// variable the prompt renders as the chat), the same generation fields and schema, and the environment that
// keeps promptfoo's state in that folder.
import { fs, path } from "zx";

/** Writes the tests under `pf`; returns `config(url)`, which points promptfoo at a server. */
export async function promptfooProject(pf, bodies) {
  await fs.mkdirp(pf);
  const { messages: _m, model: _model, ...fields } = bodies[0];
  const { chat_template_kwargs, ...openaiFields } = fields;
  await fs.writeFile(
    path.join(pf, "tests.yaml"),
    JSON.stringify(bodies.map((b) => ({ vars: { messages: JSON.stringify(b.messages) } }))),
  );
  return (url) =>
    fs.writeFile(
      path.join(pf, "promptfooconfig.yaml"),
      JSON.stringify({
        prompts: ["{{ messages }}"],
        providers: [
          {
            id: "openai:chat:bench",
            config: {
              apiBaseUrl: url,
              apiKey: "none",
              ...openaiFields,
              passthrough: { chat_template_kwargs },
            },
          },
        ],
        tests: "file://tests.yaml",
      }),
    );
}

/** promptfoo's environment: no telemetry, update check or logs, its config and cache under `pf`. */
export const promptfooEnv = (pf) => ({
  PROMPTFOO_DISABLE_TELEMETRY: "1",
  PROMPTFOO_DISABLE_DEBUG_LOG: "1",
  PROMPTFOO_DISABLE_ERROR_LOG: "1",
  PROMPTFOO_DISABLE_UPDATE: "1",
  PROMPTFOO_CONFIG_DIR: path.join(pf, "home"),
  PROMPTFOO_CACHE_PATH: path.join(pf, "cache"),
});
