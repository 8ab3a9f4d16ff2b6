// keel/ai-sdk from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/adapters/ai-sdk.js", "keel/ai-sdk");
