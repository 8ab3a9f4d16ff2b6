/** Scripted pi sessions on @mariozechner/pi-coding-agent 0.73 (the dev dependency) and this Node. */
import { defineE2E } from "./e2e-suite.js";
import { pi073 } from "./helpers.js";

defineE2E("pi 0.73 on Node 20", pi073);
