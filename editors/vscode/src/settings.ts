// Settings a repository must not control (vscode-free, so unit tests run
// in plain Node).

/** What `WorkspaceConfiguration.inspect` returns, in the parts used here. */
export interface Inspected<T> {
    defaultValue?: T;
    globalValue?: T;
    workspaceValue?: T;
    workspaceFolderValue?: T;
}

/**
 * Settings that choose what runs or where the API key goes: the binary,
 * its flags and environment, extension directories, the provider's base URL. They are `machine` scoped in package.json (user
 * settings, or in a remote window the remote machine's settings), and read
 * here from the user level only, so a repository's .vscode/settings.json
 * cannot point zot at a binary or an extension inside it even if an older
 * VS Code applied a workspace value.
 */
export const machineSettings = ["serverPath", "serverArgs", "serverEnv", "extensions", "piFlags", "baseUrl"] as const;

/** The user-level value of a machine setting; workspace values are ignored. */
export function userLevel<T>(i: Inspected<T> | undefined): T | undefined {
    return i?.globalValue ?? i?.defaultValue;
}
