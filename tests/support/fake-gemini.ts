// The fake Gemini API server (scripts/fake-gemini.mjs) as the tests use it: its handle typed once, and a
// routes-file entry pointing a project at it.
// @ts-expect-error: a plain ESM script, also run by hand
import { startFakeGemini } from "../../scripts/fake-gemini.mjs";
import { providerRoute, type ProviderFake, type ProviderRequest } from "./provider-fake.js";

/** One request the fake received. */
export interface GeminiRequest extends ProviderRequest {
  model: string;
}

/** The fake; its url is without the API version (as GOOGLE_GEMINI_BASE_URL takes it). */
export type GeminiFake = ProviderFake<GeminiRequest>;

/** The fake on 127.0.0.1, a free port (options as scripts/fake-gemini.mjs documents them). */
export const startGeminiFake = (options: Record<string, unknown> = {}): Promise<GeminiFake> =>
  startFakeGemini(options);

/** The shipped route's per-model rules (registry/providers.yaml), as a route's lines. */
const GEMINI_MODELS = `    request:
      models:
        "gemini-2.5-pro*":
          reasoning_low:
            generationConfig: { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } }
        "gemini-2.5-flash*":
          thinking_off:
            generationConfig: { thinkingConfig: { thinkingBudget: 0 } }
`;

/** A routes-file entry `name` for the fake: the shipped route's rules, quick retries, no early stop. */
export const geminiRoute = (name: string, url: string): string =>
  providerRoute(name, "gemini", url, "GEMINI_API_KEY", GEMINI_MODELS);
