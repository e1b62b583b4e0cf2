// A checkpoint's text of a file, rebuilt from zot/checkpoint/diff's unified
// diff (checkpoint → now) and the file's text now: each hunk's new lines
// are replaced by its old ones. Pure (no vscode): the unit tests run it.

import type { CheckpointInfo } from "./lsp_ext";

/** The checkpoint's text of a file whose text now is `now`. */
export function checkpointText(diff: string, now: string): string {
    const nowLines = now.split("\n");
    // A final newline leaves an empty last element: not a line.
    const endsNL = now.endsWith("\n");
    if (endsNL) {
        nowLines.pop();
    }
    const out: string[] = [];
    let pos = 0; // the next line of now not yet copied (0-based)
    let inHunk = false;
    let oldEndsNL = endsNL;
    let lastSide: " " | "-" | "+" | undefined;
    for (const line of diff.split("\n")) {
        const h = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
        if (h) {
            // With a count of 0 the hunk goes after that line.
            const start = h[2] === "0" ? Number(h[1]) : Number(h[1]) - 1;
            while (pos < start && pos < nowLines.length) {
                out.push(nowLines[pos++]);
            }
            inHunk = true;
            continue;
        }
        if (!inHunk) {
            continue;
        }
        const c = line[0];
        if (c === " ") {
            out.push(line.slice(1));
            pos++;
            lastSide = " ";
        } else if (c === "-") {
            out.push(line.slice(1));
            lastSide = "-";
        } else if (c === "+") {
            pos++;
            lastSide = "+";
        } else if (c === "\\") {
            // "\ No newline at end of file" after the old side's last line.
            if (lastSide === "-" || lastSide === " ") {
                oldEndsNL = false;
            }
            if (lastSide === "+") {
                oldEndsNL = true;
            }
        } else {
            inHunk = false;
        }
    }
    while (pos < nowLines.length) {
        out.push(nowLines[pos++]);
    }
    if (out.length === 0) {
        return "";
    }
    return out.join("\n") + (oldEndsNL ? "\n" : "");
}

/** The checkpoint taken before the prompt at messageIndex (the latest, when it was sent again). */
export function checkpointFor(list: CheckpointInfo[], messageIndex: number): CheckpointInfo | undefined {
    for (let i = list.length - 1; i >= 0; i--) {
        if (list[i].kind === "prompt" && list[i].messageIndex === messageIndex) {
            return list[i];
        }
    }
    return undefined;
}
