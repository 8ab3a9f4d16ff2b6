// keel/openai-agents from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/adapters/openai-agents/index.js", "keel/openai-agents");
