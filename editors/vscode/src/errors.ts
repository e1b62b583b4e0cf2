// Errors of requests to zot, as the user reads them.

import { ResponseError } from "vscode-languageclient";

/** The message of an error from a request, for the user. */
export function errorMessage(e: unknown): string {
    if (e instanceof ResponseError) {
        return e.message;
    }
    return e instanceof Error ? e.message : String(e);
}
