#!/usr/bin/env node
// The first step of `npm run build`: dist/ is made whole each time. tsc writes the outputs of the sources
// it compiles and leaves those of a source since removed, which nothing loads or keys but `npm pack` (run
// by `prepack`) would ship. tsc compiles every source each time (no incremental build), so nothing is lost.
import { rmSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
