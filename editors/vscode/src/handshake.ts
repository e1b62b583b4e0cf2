// The version handshake (docs/protocol.md, "initialize"): whether this
// extension can use the zot that answered, and if not, the one message
// that says so — both versions and what to update — instead of a string
// of MethodNotFound errors later.

import * as ext from "./lsp_ext";
import type { ServerSource } from "./config";

/** The server as launched: its command and where it came from. */
export interface LaunchedServer {
    command: string;
    source: ServerSource;
}

/**
 * Why the server cannot be used, for the user, or undefined when it can.
 * extensionVersion is this extension's version; hasBundled whether this
 * package carries its own zot (the fix may be to use it).
 */
export function incompatibility(
    info: ext.ServerInfo | undefined,
    server: LaunchedServer,
    extensionVersion: string,
    hasBundled: boolean,
): string | undefined {
    const us = `this extension (zot ${extensionVersion})`;
    if (!info || typeof info.protocolVersion !== "number") {
        return `"${server.command} lsp" is not zot's language server (its initialize result has no experimental.zot); ${us} needs zot. ${fix(server, hasBundled)}`;
    }
    const them = `zot ${info.version || "(unknown version)"} (${server.command})`;
    if (info.protocolVersion > ext.PROTOCOL_VERSION) {
        return `${them} speaks protocol version ${info.protocolVersion}; ${us} speaks ${ext.PROTOCOL_VERSION}. Update the zot extension.`;
    }
    if (info.protocolVersion < ext.PROTOCOL_VERSION) {
        return `${them} speaks protocol version ${info.protocolVersion}; ${us} speaks ${ext.PROTOCOL_VERSION}. ${fix(server, hasBundled)}`;
    }
    const rev = typeof info.protocol === "number" ? info.protocol : undefined;
    if (rev === undefined || rev < ext.PROTOCOL_REVISION) {
        const has = rev === undefined ? "an older protocol revision than 11" : `protocol revision ${rev}`;
        return `${them} implements ${has}; ${us} needs revision ${ext.PROTOCOL_REVISION} or newer. ${fix(server, hasBundled)}`;
    }
    return undefined;
}

/** What to update when the server is too old, by where it came from. */
function fix(server: LaunchedServer, hasBundled: boolean): string {
    switch (server.source) {
        case "setting":
            return hasBundled
                ? `Update the zot that "zot.serverPath" names, or clear "zot.serverPath" to use the zot bundled with this extension.`
                : `Update the zot that "zot.serverPath" names.`;
        case "bundled":
            return "The zot bundled with this extension does not match it: reinstall the extension.";
        case "path":
            return `Update zot on your PATH, or set "zot.serverPath" to a newer zot (or install this extension's package for your platform, which brings its own).`;
    }
}
