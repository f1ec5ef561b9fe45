// The fake Anthropic Messages API server (scripts/fake-anthropic.mjs) as the tests use it: its handle typed
// once, and a routes-file entry pointing a project at it.
// @ts-expect-error: a plain ESM script, also run by hand
import { startFakeAnthropic } from "../../scripts/fake-anthropic.mjs";
import { providerRoute, type ProviderFake, type ProviderRequest } from "./provider-fake.js";

/** One request the fake received. */
export interface AnthropicRequest extends ProviderRequest {
  headers: Record<string, string | string[] | undefined>;
}

/** The fake; its url is without the API version (as ANTHROPIC_BASE_URL takes it). */
export type AnthropicFake = ProviderFake<AnthropicRequest>;

/** The fake on 127.0.0.1, a free port (options as scripts/fake-anthropic.mjs documents them). */
export const startAnthropicFake = (options: Record<string, unknown> = {}): Promise<AnthropicFake> =>
  startFakeAnthropic(options);

/** A routes-file entry `name` for the fake: the shipped route's fields, quick retries, no early stop. */
export const anthropicRoute = (name: string, url: string): string =>
  providerRoute(name, "anthropic", url, "ANTHROPIC_API_KEY");
