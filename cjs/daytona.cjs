// keel/daytona from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/backend/container/daytona.js", "keel/daytona");
