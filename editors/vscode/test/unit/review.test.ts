import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { resetFake, fake, FakeDocument, CancellationTokenSource, TabInputTextDiff } from "./fake/vscode";
import { fakeCtx } from "./fake/ctx";
import { ReviewManager, PROPOSAL_SCHEME, ORIGINAL_SCHEME } from "../../src/review";
import { registerCommands, reviewDecision } from "../../src/commands";
import type { Ctx } from "../../src/ctx";
import type { ReviewEditParams, ReviewEditResult } from "../../src/lsp_ext";

const params = (p: Partial<ReviewEditParams> = {}): ReviewEditParams => ({
    uri: "file:///ws/src/a.go",
    oldText: "one\n",
    newText: "two\n",
    toolCallId: "toolu_1",
    tool: "edit",
    ...p,
});

/** Starts a review and returns its answer and the diff it opened. */
async function startReview(m: ReviewManager, p = params(), cts = new CancellationTokenSource()) {
    const answer = m.review(p, cts.token);
    await new Promise((r) => setImmediate(r));
    const diff = fake.executed.find((e) => e.command === "vscode.diff");
    assert.ok(diff, "the review opens a diff editor");
    const [left, right, title] = diff.args as [vscode.Uri, vscode.Uri, string];
    return { answer, left, right, title, cts };
}

/** Whether answer has settled (without waiting for it). */
async function settled(answer: Promise<ReviewEditResult>): Promise<boolean> {
    let done = false;
    void answer.then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    return done;
}

/** The user's next answer (a button of the next message, an input box), given when the test calls it. */
function later(): (answer: string | undefined) => void {
    let give!: (answer: string | undefined) => void;
    fake.answers.push(new Promise<string | undefined>((r) => (give = r)));
    return (a) => give(a);
}

/** The review notifications shown so far. */
const notifications = () => fake.messages.filter((x) => x.message.startsWith("zot wants to"));

/** Lets the extension run until it waits on the user again. */
const tick = () => new Promise((r) => setImmediate(r));

let m: ReviewManager;
let ctx: Ctx;
const logs: string[] = [];
beforeEach(() => {
    resetFake();
    logs.length = 0;
    m = new ReviewManager((s) => logs.push(s));
    // The palette and diff title commands, on this ReviewManager: the notification runs them.
    ctx = { ...fakeCtx().ctx, reviews: m };
    registerCommands(ctx as Ctx & { focusChat(): unknown; showOutput(): unknown });
});

test("a review shows the file as it is against zot's editable proposal, and a notification", async () => {
    const { left, right, title } = await startReview(m);
    assert.equal(left.scheme, ORIGINAL_SCHEME);
    assert.equal(right.scheme, PROPOSAL_SCHEME);
    assert.equal(title, "a.go ↔ zot's proposed change (editable)");
    const original = fake.fileSystems.get(ORIGINAL_SCHEME) as vscode.FileSystemProvider;
    const proposal = fake.fileSystems.get(PROPOSAL_SCHEME) as vscode.FileSystemProvider;
    assert.equal(Buffer.from(await original.readFile(left)).toString(), "one\n");
    assert.equal(Buffer.from(await proposal.readFile(right)).toString(), "two\n");
    // No full stop; labelled buttons, not only the diff title's icons.
    assert.deepEqual(notifications(), [{ level: "info", message: "zot wants to change src/a.go (edit)", items: ["Accept", "Reject", "Open Diff"] }]);
    assert.equal(fake.contexts.get("zot.reviewing"), true);
    assert.equal(m.count, 1);
});

test("accept as proposed: decision accept without text; the diff closes, the context clears", async () => {
    const { answer, right } = await startReview(m);
    fake.tabGroups.push({ tabs: [{ input: new TabInputTextDiff(vscode.Uri.parse("zot-review-original:/1/a.go"), right) }] });
    assert.equal(await settled(answer), false, "zot waits for the user");
    await m.accept();
    assert.deepEqual(await answer, { decision: "accept" });
    assert.equal(fake.closedTabs.length, 1);
    assert.equal(fake.contexts.get("zot.reviewing"), false);
    assert.equal(m.count, 0);
    const proposal = fake.fileSystems.get(PROPOSAL_SCHEME) as vscode.FileSystemProvider;
    assert.throws(() => proposal.readFile(right), /not found/, "the proposal is dropped");
});

test("accept after the user edited the proposal: the user's text goes back (and the buffer is saved)", async () => {
    const { answer, right } = await startReview(m);
    const doc = new FakeDocument(right, "two, but better\n");
    doc.isDirty = true;
    fake.documents.push(doc);
    await m.accept(right);
    assert.deepEqual(await answer, { decision: "accept", text: "two, but better\n" });
    assert.equal(doc.saves, 1);
});

test("reject carries the reason; a second decision is ignored", async () => {
    const { answer, right } = await startReview(m);
    await m.reject(right, "keep the greeting");
    assert.deepEqual(await answer, { decision: "reject", message: "keep the greeting" });
    await m.accept(right);
    assert.deepEqual(fake.messages.at(-1), { level: "info", message: "zot: no change is waiting for review.", items: [] });
});

test("zot stops waiting ($/cancelRequest): the review is rejected and closed", async () => {
    const { answer, cts } = await startReview(m);
    cts.cancel();
    assert.deepEqual(await answer, { decision: "reject" });
    assert.equal(m.count, 0);
});

test("Accept on the notification accepts as the diff title does: the user's edits of the proposal go back", async () => {
    const click = later();
    const { answer, right } = await startReview(m);
    const doc = new FakeDocument(right, "two, edited in the diff\n");
    doc.isDirty = true;
    fake.documents.push(doc);
    click("Accept");
    assert.deepEqual(await answer, { decision: "accept", text: "two, edited in the diff\n" });
    assert.equal(doc.saves, 1);
    assert.equal(notifications().length, 1, "one notification, not shown again once decided");
});

test("Reject on the notification asks why; Escape goes back to the review and its notification", async () => {
    fake.answers.push("Reject", undefined, "Reject", "  keep the greeting ");
    const { answer } = await startReview(m);
    // No reason is invented: zot quotes message to the model as the user's words.
    assert.deepEqual(await answer, { decision: "reject", message: "keep the greeting" });
    assert.equal(notifications().length, 2, "shown again after the Escape");
    assert.deepEqual(fake.answers, []);
});

test("Open Diff shows the diff again and the notification again; dismissing it decides nothing", async () => {
    const click = later();
    const { answer, left, right } = await startReview(m);
    const dismiss = later();
    click("Open Diff");
    await tick();
    const diffs = fake.executed.filter((e) => e.command === "vscode.diff");
    assert.equal(diffs.length, 2);
    assert.deepEqual(diffs[1].args.slice(0, 2), [left, right]);
    assert.equal(notifications().length, 2, "the notification again: the click closed it");
    dismiss(undefined);
    await tick();
    assert.equal(await settled(answer), false, "zot still waits");
    assert.equal(notifications().length, 2);
    await m.accept(right);
    assert.deepEqual(await answer, { decision: "accept" });
});

test("a click on the notification of a review decided elsewhere decides nothing and says so", async () => {
    const clickA = later();
    const a = await startReview(m, params({ uri: "file:///ws/a.go", toolCallId: "toolu_a" }));
    const clickB = later();
    const b = await startReview(m, params({ uri: "file:///ws/b.go", toolCallId: "toolu_b" }));
    const clickC = later();
    const c = await startReview(m, params({ uri: "file:///ws/c.go", toolCallId: "toolu_c" }));
    const d = await startReview(m, params({ uri: "file:///ws/d.go", toolCallId: "toolu_d" }));
    await reviewDecision(ctx, "toolu_a", "accept"); // the chat card's Accept
    assert.deepEqual(await a.answer, { decision: "accept" });
    fake.answers.push(""); // the card's Reject asks why
    await reviewDecision(ctx, "toolu_b", "reject");
    assert.deepEqual(await b.answer, { decision: "reject" });
    c.cts.cancel(); // zot stopped waiting
    assert.deepEqual(await c.answer, { decision: "reject" });
    clickA("Reject");
    clickB("Accept");
    clickC("Accept");
    await tick();
    assert.deepEqual(fake.statusMessages, [
        "zot: the change to a.go was already accepted",
        "zot: the change to b.go was already rejected",
        "zot: the change to c.go was already withdrawn",
    ]);
    assert.equal(await settled(d.answer), false, "the review still waiting is not touched");
    assert.equal(m.count, 1);
    assert.equal(notifications().length, 4, "no notification shown again");
});

test("a reason typed after the review was decided elsewhere rejects no other review", async () => {
    fake.answers.push("Reject");
    const why = later();
    const a = await startReview(m, params({ uri: "file:///ws/a.go", toolCallId: "toolu_a" }));
    const b = await startReview(m, params({ uri: "file:///ws/b.go", toolCallId: "toolu_b" }));
    await reviewDecision(ctx, "toolu_a", "accept"); // while the reason box is open
    why("too late");
    await tick();
    assert.deepEqual(await a.answer, { decision: "accept" });
    assert.equal(await settled(b.answer), false);
    assert.equal(m.count, 1);
});

test("closing the diff without deciding rejects", async () => {
    const { answer, left, right } = await startReview(m);
    const tab = { input: new TabInputTextDiff(left, right) };
    fake.tabGroups.push({ tabs: [tab] });
    await vscode.window.tabGroups.close([tab as unknown as vscode.Tab]);
    assert.deepEqual(await answer, { decision: "reject" });
});

test("two reviews: each answered on its own; abandonAll (zot gone) closes the rest without answering", async () => {
    const a = await startReview(m, params({ uri: "file:///ws/a.go" }));
    fake.executed.length = 0;
    const b = await startReview(m, params({ uri: "file:///ws/b.go", oldText: "" }));
    assert.match(b.title, /zot's proposed create/);
    assert.notEqual(a.right.toString(), b.right.toString());
    await m.accept(a.right);
    assert.deepEqual(await a.answer, { decision: "accept" });
    assert.equal(await settled(b.answer), false);
    m.abandonAll();
    await new Promise((r) => setImmediate(r));
    assert.equal(m.count, 0, "no review is left open");
    // Answering would write to the closed pipe (ERR_STREAM_DESTROYED).
    assert.equal(await settled(b.answer), false, "nothing is answered to the dead connection");
});
