// The report page's style and script, kept in files beside this one (page.css, and page.client.js: plain
// browser JavaScript, not compiled) and read at report time from the install root, so that the page is
// the same whether medbench runs from dist/ or not. The script's data is the page's embedded JSON.
import { resolve } from "node:path";
import { readFileSync } from "../util/builtins.js";
import { installRoot } from "../util/paths.js";

/** Text to inline in a `<tag>` element, with any `</tag` in it escaped so that it cannot end the element. */
export const inlineSafe = (text: string, tag: "script" | "style"): string =>
  text.replace(new RegExp(`</${tag}`, "gi"), `<\\/${tag}`);

const pageFile = (name: string): string => readFileSync(resolve(installRoot(), "src/report", name), "utf8");

/** The page's CSS (src/report/page.css), ready for its `<style>` element. */
export const pageStyle = (): string => inlineSafe(pageFile("page.css"), "style");

/** The page's script (src/report/page.client.js), ready for its `<script>` element. */
export const pageScript = (): string => inlineSafe(pageFile("page.client.js"), "script");

/** The item view's script (src/report/items.client.js), run after the page's. */
export const itemsScript = (): string => inlineSafe(pageFile("items.client.js"), "script");

/** The item view's CSS (src/report/items.css). */
export const itemsStyle = (): string => inlineSafe(pageFile("items.css"), "style");
