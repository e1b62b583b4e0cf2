import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { machineSettings, userLevel } from "../../src/settings";

test("settings that choose what runs are machine scoped", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
        contributes: { configuration: { properties: Record<string, { scope?: string } | undefined> } };
    };
    const props = pkg.contributes.configuration.properties;
    for (const k of machineSettings) {
        assert.equal(props["zot." + k]?.scope, "machine", `zot.${k} must be machine scoped (not settable by a workspace)`);
    }
});

test("userLevel ignores workspace and folder values", () => {
    assert.equal(userLevel({ defaultValue: "zot", workspaceValue: "./evil", workspaceFolderValue: "./evil2" }), "zot");
    assert.equal(userLevel({ defaultValue: "zot", globalValue: "/opt/zot", workspaceValue: "./evil" }), "/opt/zot");
    assert.deepEqual(userLevel<string[]>({ defaultValue: [], workspaceValue: ["./.zot-ext"] }), []);
    assert.equal(userLevel(undefined), undefined);
});
