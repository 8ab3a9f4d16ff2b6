// keel/pi from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/adapters/pi/extension.js", "keel/pi");
