"use strict";
// @mariozechner/pi-agent-core: extensions import its types only; the
// runtime values they may touch are TypeBox's.
module.exports = { ...require("@sinclair/typebox") };
