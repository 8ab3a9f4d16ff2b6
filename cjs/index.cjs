// keel from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/index.js", "keel");
