// The protocols a route may speak, by the name a registry gives (`protocol:`, default openai): the one place
// a protocol is registered. Each is loaded only when a route names it, so no stage's code reaches another
// protocol's module: a model stage's key holds the code of its route's protocol alone, through the route's
// identity (stages/model.ts routeIdentity), and this table is not part of any key
// (src/runner/code/code.ts INFRASTRUCTURE).
import type { Route } from "./registry.js";
import type { Protocol } from "./protocol.js";

interface Registered {
  /** The compiled module, install-relative: its code is keyed with the stages whose route speaks it. */
  module: string;
  load(): Promise<Protocol>;
}

const PROTOCOLS: Record<string, Registered> = {
  openai: {
    module: "dist/src/model/openai.js",
    load: async () => (await import("./openai.js")).openai,
  },
  gemini: {
    module: "dist/src/model/gemini.js",
    load: async () => (await import("./gemini.js")).gemini,
  },
  anthropic: {
    module: "dist/src/model/anthropic.js",
    load: async () => (await import("./anthropic.js")).anthropic,
  },
};

export const PROTOCOL_NAMES: readonly string[] = Object.keys(PROTOCOLS);
export const DEFAULT_PROTOCOL = "openai";

/** The protocol a route speaks (the registry refuses a name not in the table). */
export function protocolName(route: Route): string {
  return route.protocol ?? DEFAULT_PROTOCOL;
}

function registered(name: string): Registered {
  const found = PROTOCOLS[name];
  if (!found) throw new Error(`no protocol ${name} (known: ${PROTOCOL_NAMES.join(", ")})`);
  return found;
}

/** The compiled module of a route's protocol, install-relative (what its key holds). */
export const protocolModule = (route: Route): string => registered(protocolName(route)).module;

const loaded = new Map<string, Promise<Protocol>>();

/** The route's protocol, loaded on first use. */
export function protocolOf(route: Route): Promise<Protocol> {
  const name = protocolName(route);
  let protocol = loaded.get(name);
  if (!protocol) loaded.set(name, (protocol = registered(name).load()));
  return protocol;
}
