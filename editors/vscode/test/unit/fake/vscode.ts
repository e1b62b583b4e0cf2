// A small fake of the vscode API for the extension-host unit tests: the
// test build (esbuild.mjs --tests) resolves "vscode" to this file. It
// implements what zot's extension and vscode-languageclient use, records
// what the extension shows and runs, and lets a test script the user's
// answers (fake.answers). What it does not model is absent (and
// vscode.languages throws), so code that needs more fails loudly instead of
// passing on a call the fake ignores.

type Listener<T> = (e: T) => unknown;

export class Disposable {
    constructor(private readonly fn: () => unknown = () => undefined) {}
    static from(...ds: { dispose(): unknown }[]): Disposable {
        return new Disposable(() => ds.forEach((d) => d.dispose()));
    }
    dispose(): void {
        this.fn();
    }
}

export class EventEmitter<T> {
    private listeners = new Set<Listener<T>>();
    readonly event = (l: Listener<T>): Disposable => {
        this.listeners.add(l);
        return new Disposable(() => this.listeners.delete(l));
    };
    fire(e: T): void {
        for (const l of [...this.listeners]) {
            l(e);
        }
    }
    dispose(): void {
        this.listeners.clear();
    }
}

export class CancellationTokenSource {
    private readonly emitter = new EventEmitter<void>();
    readonly token = {
        isCancellationRequested: false,
        onCancellationRequested: this.emitter.event,
    };
    cancel(): void {
        this.token.isCancellationRequested = true;
        this.emitter.fire();
    }
    dispose(): void {
        this.emitter.dispose();
    }
}

export class CancellationError extends Error {}

export class Uri {
    private constructor(
        readonly scheme: string,
        readonly authority: string,
        readonly path: string,
        readonly query = "",
        readonly fragment = "",
    ) {}
    static parse(s: string): Uri {
        const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(s);
        if (!m) {
            throw new Error(`fake vscode: cannot parse uri ${s}`);
        }
        return new Uri(m[1], m[2] ?? "", decodeURIComponent(m[3]), m[4] ?? "", m[5] ?? "");
    }
    static file(p: string): Uri {
        return new Uri("file", "", p);
    }
    static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
        return new Uri(c.scheme, c.authority ?? "", c.path ?? "", c.query ?? "", c.fragment ?? "");
    }
    static joinPath(base: Uri, ...segs: string[]): Uri {
        return new Uri(base.scheme, base.authority, [base.path.replace(/\/$/, ""), ...segs].join("/"));
    }
    get fsPath(): string {
        return this.path;
    }
    with(c: { scheme?: string; path?: string }): Uri {
        return new Uri(c.scheme ?? this.scheme, this.authority, c.path ?? this.path, this.query, this.fragment);
    }
    toString(): string {
        const auth = this.scheme === "file" || this.authority ? `//${this.authority}` : "";
        return `${this.scheme}:${auth}${this.path}${this.query ? "?" + this.query : ""}${this.fragment ? "#" + this.fragment : ""}`;
    }
    toJSON(): string {
        return this.toString();
    }
}

export class ThemeColor {
    constructor(readonly id: string) {}
}

export class FileSystemError extends Error {
    static FileNotFound(u?: Uri): FileSystemError {
        return new FileSystemError(`file not found: ${String(u)}`);
    }
    static NoPermissions(m?: string): FileSystemError {
        return new FileSystemError(m ?? "no permissions");
    }
}

export class TabInputText {
    constructor(readonly uri: Uri) {}
}
export class TabInputTextDiff {
    constructor(
        readonly original: Uri,
        readonly modified: Uri,
    ) {}
}
export class TabInputNotebook {}
export class TabInputCustom {}

// Classes vscode-languageclient extends when it loads.
export class Diagnostic {}
export class CodeAction {}
export class CodeLens {}
export class CompletionItem {}
export class DocumentLink {}
export class InlayHint {}
export class SymbolInformation {}
export class CallHierarchyItem {}
export class TypeHierarchyItem {}
export class Position {
    constructor(
        readonly line: number,
        readonly character: number,
    ) {}
}
export class Range {
    constructor(
        readonly start: Position,
        readonly end: Position,
    ) {}
}

export enum StatusBarAlignment {
    Left = 1,
    Right = 2,
}
export enum ViewColumn {
    Active = -1,
    Beside = -2,
    One = 1,
}
export enum ProgressLocation {
    SourceControl = 1,
    Window = 10,
    Notification = 15,
}
export enum FileType {
    Unknown = 0,
    File = 1,
    Directory = 2,
}
export enum FileChangeType {
    Changed = 1,
    Created = 2,
    Deleted = 3,
}
export enum LogLevel {
    Off = 0,
    Trace = 1,
    Debug = 2,
    Info = 3,
    Warning = 4,
    Error = 5,
}

export const version = "1.91.0";

// ---------------------------------------------------------------- recorded state

/** A document as the fake workspace holds it. */
export class FakeDocument {
    isDirty = false;
    isClosed = false;
    saves = 0;
    /** What save() resolves to (a failed save: false). */
    saveResult = true;
    constructor(
        readonly uri: Uri,
        public text: string,
    ) {}
    getText(): string {
        return this.text;
    }
    async save(): Promise<boolean> {
        this.saves++;
        if (this.saveResult) {
            this.isDirty = false;
        }
        return this.saveResult;
    }
}

/** A webview panel; the test plays the webview with receive(). */
export class FakeWebviewPanel {
    readonly posted: unknown[] = [];
    disposed = false;
    revealed = 0;
    iconPath?: Uri;
    private readonly received = new EventEmitter<unknown>();
    private readonly disposedEmitter = new EventEmitter<void>();
    readonly webview = {
        html: "",
        options: {},
        cspSource: "fake-csp",
        asWebviewUri: (u: Uri) => u,
        postMessage: async (m: unknown) => {
            this.posted.push(m);
            return true;
        },
        onDidReceiveMessage: this.received.event,
    };
    readonly onDidDispose = this.disposedEmitter.event;
    constructor(
        readonly viewType: string,
        public title: string,
        readonly viewColumn: number,
    ) {}
    /** A message from the webview's script. */
    receive(m: unknown): void {
        this.received.fire(m);
    }
    reveal(): void {
        this.revealed++;
    }
    dispose(): void {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        this.disposedEmitter.fire();
    }
}

interface Shown {
    level: "info" | "warn" | "error";
    message: string;
    items: string[];
}

function newRecord() {
    return {
        /** Messages shown with showInformationMessage & co, in order. */
        messages: [] as Shown[],
        /** commands.executeCommand calls, in order. */
        executed: [] as { command: string; args: unknown[] }[],
        /** Registered commands. */
        commands: new Map<string, (...a: unknown[]) => unknown>(),
        panels: [] as FakeWebviewPanel[],
        documents: [] as FakeDocument[],
        /** Documents openTextDocument can open, by uri string. */
        disk: new Map<string, string>(),
        fileSystems: new Map<string, unknown>(),
        /** Status bar messages (setStatusBarMessage), in order. */
        statusMessages: [] as string[],
        /** Progress notifications: title and the cancel source of each. */
        progress: [] as { title: string; cancel: CancellationTokenSource; done: Promise<unknown> }[],
        settings: new Map<string, unknown>(),
        /**
         * Scripted answers to showQuickPick / showInputBox / messages with
         * items, in order. A promise is an answer the test gives later (a
         * button clicked after something else happened).
         */
        answers: [] as unknown[],
        /** The items of every showQuickPick, in order. */
        quickPicks: [] as unknown[][],
        tabGroups: [] as { tabs: { input: unknown }[] }[],
        closedTabs: [] as { input: unknown }[],
        contexts: new Map<string, unknown>(),
        /** Documents shown with showTextDocument, in order. */
        shown: [] as FakeDocument[],
        /** Status bar items created, in order (text, command; disposed). */
        statusItems: [] as { text: string; command: string; disposed: boolean }[],
    };
}

/** What the extension did, and the user's scripted answers. */
export let fake = newRecord();
const configChanged = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
const tabsChanged = new EventEmitter<{ opened: unknown[]; closed: unknown[]; changed: unknown[] }>();
const willSave = new EventEmitter<{ document: { uri: Uri }; waitUntil(p: Promise<unknown>): void }>();
const docClosed = new EventEmitter<{ uri: Uri }>();

/** VS Code about to save doc: fires onWillSaveTextDocument and waits for what its listeners wait on. */
export async function fireWillSave(doc: { uri: Uri }): Promise<void> {
    const waits: Promise<unknown>[] = [];
    willSave.fire({ document: doc, waitUntil: (p) => void waits.push(p) });
    await Promise.all(waits);
}

/** VS Code closed doc (onDidCloseTextDocument). */
export function fireClosed(doc: { uri: Uri }): void {
    docClosed.fire(doc);
}

/** Starts a test with a fresh fake. */
export function resetFake(): typeof fake {
    fake = newRecord();
    return fake;
}

function answer<T>(): T | undefined {
    return fake.answers.shift() as T | undefined;
}

function show(level: Shown["level"]) {
    return async (message: string, ...rest: unknown[]) => {
        const items = rest.filter((r): r is string => typeof r === "string");
        fake.messages.push({ level, message, items });
        return items.length ? answer<string>() : undefined;
    };
}

function outputChannel(name: string) {
    const lines: string[] = [];
    const log = (m: unknown) => void lines.push(String(m));
    return {
        name,
        lines,
        logLevel: LogLevel.Info,
        onDidChangeLogLevel: new EventEmitter<LogLevel>().event,
        append: log,
        appendLine: log,
        replace: log,
        clear: () => void (lines.length = 0),
        show: () => undefined,
        hide: () => undefined,
        trace: log,
        debug: log,
        info: log,
        warn: log,
        error: log,
        dispose: () => undefined,
    };
}

export const window = {
    showInformationMessage: show("info"),
    showWarningMessage: show("warn"),
    showErrorMessage: show("error"),
    async showQuickPick<T>(items: T[] | Promise<T[]>, _opts?: unknown): Promise<T | undefined> {
        const list = await items;
        fake.quickPicks.push(list);
        const a = answer<number | string>();
        if (a === undefined) {
            return undefined;
        }
        return typeof a === "number" ? list[a] : list.find((i) => (i as { label?: string }).label === a || i === a);
    },
    async showInputBox(_opts?: unknown): Promise<string | undefined> {
        return answer<string>();
    },
    async withProgress<R>(opts: { title?: string }, task: (p: { report(v: unknown): void }, token: CancellationTokenSource["token"]) => Promise<R>): Promise<R> {
        const cancel = new CancellationTokenSource();
        const done = task({ report: () => undefined }, cancel.token);
        fake.progress.push({ title: opts.title ?? "", cancel, done });
        return done;
    },
    setStatusBarMessage(text: string, _hide?: unknown): Disposable {
        fake.statusMessages.push(text);
        return new Disposable();
    },
    createOutputChannel: (name: string) => outputChannel(name),
    createStatusBarItem: () => {
        const item = { text: "", tooltip: "", name: "", command: "", backgroundColor: undefined, disposed: false, show: () => undefined, dispose: () => void (item.disposed = true) };
        fake.statusItems.push(item);
        return item;
    },
    createWebviewPanel(viewType: string, title: string, show: { viewColumn: number } | number): FakeWebviewPanel {
        const p = new FakeWebviewPanel(viewType, title, typeof show === "number" ? show : show.viewColumn);
        fake.panels.push(p);
        return p;
    },
    registerWebviewViewProvider: () => new Disposable(),
    /** showTextDocument: the document becomes the active editor's. */
    async showTextDocument(doc: FakeDocument): Promise<{ document: FakeDocument }> {
        fake.shown.push(doc);
        window.activeTextEditor = { document: doc };
        return { document: doc };
    },
    activeTextEditor: undefined as unknown,
    get visibleTextEditors() {
        return [];
    },
    tabGroups: {
        get all() {
            return fake.tabGroups;
        },
        onDidChangeTabs: tabsChanged.event,
        async close(tabs: { input: unknown }[]): Promise<boolean> {
            fake.closedTabs.push(...tabs);
            for (const g of fake.tabGroups) {
                g.tabs = g.tabs.filter((t) => !tabs.includes(t));
            }
            tabsChanged.fire({ opened: [], closed: tabs, changed: [] });
            return true;
        },
    },
};

export const workspace = {
    get textDocuments() {
        return fake.documents;
    },
    async openTextDocument(u: Uri | { content?: string; language?: string }): Promise<FakeDocument> {
        if (!(u instanceof Uri)) {
            // An untitled document with this content.
            const d = new FakeDocument(Uri.parse(`untitled:Untitled-${fake.documents.length + 1}`), u.content ?? "");
            fake.documents.push(d);
            return d;
        }
        const text = fake.disk.get(u.toString());
        if (text === undefined) {
            throw FileSystemError.FileNotFound(u);
        }
        const d = new FakeDocument(u, text);
        fake.documents.push(d);
        return d;
    },
    asRelativePath(u: Uri | string): string {
        const p = typeof u === "string" ? u : u.path;
        return p.replace(/^\/ws\//, "");
    },
    get workspaceFolders() {
        return [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
    },
    getConfiguration(section?: string) {
        return {
            get<T>(key: string, def?: T): T | undefined {
                const k = section ? `${section}.${key}` : key;
                return fake.settings.has(k) ? (fake.settings.get(k) as T) : def;
            },
            // The fake's settings are the user's (global) level.
            inspect<T>(key: string): { key: string; globalValue?: T } {
                const k = section ? `${section}.${key}` : key;
                return { key: k, globalValue: fake.settings.has(k) ? (fake.settings.get(k) as T) : undefined };
            },
        };
    },
    onDidChangeConfiguration: configChanged.event,
    onWillSaveTextDocument: willSave.event,
    onDidCloseTextDocument: docClosed.event,
    registerFileSystemProvider(scheme: string, provider: unknown): Disposable {
        fake.fileSystems.set(scheme, provider);
        return new Disposable(() => fake.fileSystems.delete(scheme));
    },
};

export const commands = {
    registerCommand(id: string, f: (...a: unknown[]) => unknown): Disposable {
        fake.commands.set(id, f);
        return new Disposable(() => fake.commands.delete(id));
    },
    async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
        fake.executed.push({ command, args });
        if (command === "setContext") {
            fake.contexts.set(String(args[0]), args[1]);
            return undefined;
        }
        const f = fake.commands.get(command);
        return f ? f(...args) : undefined;
    },
};

/** Fires onDidChangeConfiguration for the given settings. */
export function changeSettings(settings: Record<string, unknown>): void {
    for (const [k, v] of Object.entries(settings)) {
        fake.settings.set(k, v);
    }
    const keys = Object.keys(settings);
    configChanged.fire({ affectsConfiguration: (s) => keys.some((k) => k === s || k.startsWith(s + ".")) });
}

export const languages = new Proxy(
    {},
    {
        get(_t, name) {
            throw new Error(`fake vscode: languages.${String(name)} is not faked`);
        },
    },
);

export const env = { appName: "fake", language: "en", machineId: "fake", sessionId: "fake", uriScheme: "vscode" };
