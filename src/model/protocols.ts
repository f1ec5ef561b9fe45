// The protocol each route speaks. Every route so far speaks OpenAI's chat completions; another protocol is a
// module implementing Protocol (src/model/protocol.ts), chosen here by a field of its routes.
import type { Route } from "./registry.js";
import type { Protocol } from "./protocol.js";
import { openai } from "./openai.js";

export function protocolOf(_route: Route): Protocol {
  return openai;
}
