"use strict";
// @mariozechner/pi-ai as pi extensions use it: TypeBox re-exported, and
// StringEnum (a string enum schema Google's APIs accept too).
const typebox = require("@sinclair/typebox");

function StringEnum(values, options) {
	return typebox.Type.Unsafe({ type: "string", enum: [...values], ...(options || {}) });
}

module.exports = { ...typebox, Type: typebox.Type, StringEnum };
