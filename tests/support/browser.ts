// The browser the report tests read a report in: Debian's chromium driven by playwright-core, headless and
// offline (no GPU, no first-run pages, no background network, component updates or sync), so that a page
// reaches nothing but what it loads from file://.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Chromium launched; a missing one is an error that says how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium), as .ci/run does`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
