// `node --import ./test/frameworks-hook.mjs ...`: keel's adapters find the frameworks in
// test/node_modules (test/frameworks.mjs says why).
import { register } from "node:module";

register("./frameworks.mjs", import.meta.url);
