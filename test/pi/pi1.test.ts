/**
 * Scripted pi sessions on @earendil-works/pi-coding-agent 1.x under Node >= 22.19, found through
 * KEEL_PI1_DIR (see helpers.ts); skipped with a message when either is missing.
 */
import { defineE2E } from "./e2e-suite.js";
import { pi1 } from "./helpers.js";

defineE2E("pi 1.x on Node 22", pi1);
