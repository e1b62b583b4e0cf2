// permission-gate — vetoes dangerous bash commands in the fail-closed
// tool_call hook; with a UI it asks the user first (SEP's permission-gate
// example, which only blocks, plus the confirm of pi's), so a user can
// allow one on purpose.
import { defineExtension } from '../sdk.ts';

/** Commands that should never run unattended. */
const DANGEROUS: RegExp[] = [
    /\brm\s+-[a-z]*[rf]/, // rm -rf / rm -fr / rm -r …
    /\bmkfs\b/, // format a filesystem
    /\bdd\s+.*\bof=\/dev\//, // dd onto a raw device
    />\s*\/dev\/sd[a-z]/, // redirect onto a raw disk
    /:\(\)\s*\{.*:\|:.*\}\s*;\s*:/, // fork bomb
    /\bchmod\s+-R\s+0*777\s+\//, // chmod -R 777 /
];

const gate = defineExtension((smooth) => {
    smooth.name = 'permission-gate';
    smooth.version = '0.1.0';
    smooth.on('tool_call', async (input) => {
        if (input?.tool !== 'bash') return;
        const command = String(input.arguments?.command ?? '');
        const hit = DANGEROUS.find((re) => re.test(command));
        if (!hit) return;
        if (smooth.hasUI('confirm')) {
            const { confirmed } = await smooth.request('ui/request', { kind: 'confirm', prompt: `Allow this dangerous command?\n${command}` });
            if (confirmed) return;
            return { block: true, reason: `the user refused a dangerous command (matched ${hit})` };
        }
        return { block: true, reason: `blocked dangerous command (matched ${hit})` };
    });
});

gate.serve();
