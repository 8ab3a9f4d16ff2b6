// keel/vercel-sandbox from CommonJS (load.cjs says why this is a separate file).
module.exports = require("./load.cjs")("../dist/backend/container/vercel-sandbox.js", "keel/vercel-sandbox");
