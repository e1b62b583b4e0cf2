"use strict";
// @mariozechner/pi-ai as pi extensions use it: TypeBox re-exported,
// StringEnum (a string enum schema Google's APIs accept too), and what a
// registerProvider streamSimple builds its answer with
// (createAssistantMessageEventStream, calculateCost).
const typebox = require("@sinclair/typebox");
const { AssistantMessageEventStream, createAssistantMessageEventStream, calculateCost } = require("./stream.js");

function StringEnum(values, options) {
	return typebox.Type.Unsafe({ type: "string", enum: [...values], ...(options || {}) });
}

module.exports = { ...typebox, Type: typebox.Type, StringEnum, AssistantMessageEventStream, createAssistantMessageEventStream, calculateCost };
