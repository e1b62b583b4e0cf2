"use strict";
// Tool parameters: TypeBox schemas are JSON Schema already (their symbol
// keys drop out of JSON); Standard Schema (zod 4) is converted with the
// vendor's own converter and validated with its own validate, so a zod
// refinement the JSON Schema cannot say still holds.

function isStandard(s) {
	return !!(s && typeof s === "object" && s["~standard"] && typeof s["~standard"].validate === "function");
}

function toJSONSchema(params) {
	if (params == null) return { type: "object", properties: {} };
	if (isStandard(params) && params["~standard"].vendor !== "typebox") {
		const vendor = params["~standard"].vendor;
		if (vendor === "zod") {
			const { toJSONSchema: zodToJSON } = require("zod");
			const out = zodToJSON(params, { io: "input", unrepresentable: "any" });
			delete out.$schema;
			return out;
		}
		throw new Error(`parameters: a Standard Schema from ${vendor} has no JSON Schema converter here (zod and TypeBox do)`);
	}
	const out = JSON.parse(JSON.stringify(params));
	if (!out || typeof out !== "object" || Array.isArray(out)) throw new Error("parameters must be a TypeBox or zod object schema");
	return out;
}

// validateArgs checks args against a Standard Schema; it returns an error
// text, or "" (TypeBox's JSON Schema was checked by zot before the call).
function validateArgs(params, args) {
	if (!isStandard(params) || params["~standard"].vendor === "typebox") return "";
	const r = params["~standard"].validate(args);
	if (r && typeof r.then === "function") return ""; // async validators: checked by the tool itself
	if (r && r.issues && r.issues.length) {
		return "invalid arguments: " + r.issues.map((i) => `${(i.path || []).map((p) => (typeof p === "object" ? p.key : p)).join(".") || "(root)"}: ${i.message}`).join("; ");
	}
	return "";
}

module.exports = { toJSONSchema, validateArgs, isStandard };
