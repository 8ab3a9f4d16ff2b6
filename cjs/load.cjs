// require("keel") and its subpaths from CommonJS. keel is written as ES modules: Node 20.19+ and
// 22.12+ load them through require(); older versions cannot, and get told how to import instead.
module.exports = function load(path, name) {
	try {
		return require(path);
	} catch (e) {
		if (e && (e.code === "ERR_REQUIRE_ESM" || e.code === "ERR_REQUIRE_ASYNC_MODULE")) {
			throw new Error(
				`${name} is an ES module, which this Node (${process.version}) cannot require(). Use ` +
					`\`import ... from "${name}"\`, or from CommonJS \`await import("${name}")\` (or Node 20.19+ / 22.12+).`,
				{ cause: e },
			);
		}
		throw e;
	}
};
