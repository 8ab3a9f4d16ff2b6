// keel/claude-agent-sdk from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/adapters/claude-agent-sdk.js", "keel/claude-agent-sdk");
