// keel/e2b from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/backend/container/e2b.js", "keel/e2b");
