// A small, real-behaving stand-in for the `vscode` module (aliased in vitest.config.mts). Value classes behave
// like VS Code's; API functions are vi.fn()s whose listeners tests can fire through `mock` helpers below.
import * as nodePath from 'path';
import { vi } from 'vitest';

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => {}) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>): Disposable => {
    this.listeners.push(l);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((x) => x !== l);
    });
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  get listenerCount(): number {
    return this.listeners.length;
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query = '',
    readonly fragment = '',
  ) {}
  static file(p: string): Uri {
    return new Uri('file', '', p.replace(/\\/g, '/'));
  }
  static parse(s: string): Uri {
    const m = /^([a-z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/i.exec(s);
    if (!m) throw new Error(`bad uri ${s}`);
    return new Uri(m[1], m[2] ?? '', decodeURIComponent(m[3]), m[4] ?? '', m[5] ?? '');
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, base.authority, nodePath.posix.join(base.path, ...parts));
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { scheme?: string; path?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path);
  }
  toString(): string {
    return `${this.scheme}://${this.authority}${encodeURI(this.path)}${this.query ? `?${this.query}` : ''}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}
export class Selection extends Range {
  constructor(
    readonly anchor: Position,
    readonly active: Position,
  ) {
    super(anchor, active);
  }
}
export class Location {
  readonly range: Range;
  constructor(
    readonly uri: Uri,
    at: Position | Range,
  ) {
    this.range = at instanceof Position ? new Range(at, at) : at;
  }
}
export class Breakpoint {
  constructor(readonly enabled = true) {}
}
export class SourceBreakpoint extends Breakpoint {
  constructor(
    readonly location: Location,
    enabled = true,
  ) {
    super(enabled);
  }
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class DebugAdapterExecutable {
  constructor(
    readonly command: string,
    readonly args: string[] = [],
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
  Two = 2,
}
export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

// ---------------------------------------------------------------- controllable state

export const mock = {
  config: {} as Record<string, unknown>,
  trusted: true,
  workspaceFolders: [] as { uri: Uri; name: string; index: number }[],
  documents: new Map<string, TextDocument>(),
  breakpoints: [] as Breakpoint[],
  onDidChangeConfiguration: new EventEmitter<{ affectsConfiguration(s: string): boolean }>(),
  onDidGrantWorkspaceTrust: new EventEmitter<void>(),
  onDidChangeTextEditorSelection: new EventEmitter<{ textEditor: TextEditor }>(),
  onDidChangeActiveTextEditor: new EventEmitter<TextEditor | undefined>(),
  reset(): void {
    this.config = {};
    this.trusted = true;
    this.workspaceFolders = [];
    this.documents.clear();
    this.breakpoints = [];
    window.activeTextEditor = undefined;
    window.visibleTextEditors = [];
  },
  /** Fires onDidChangeConfiguration for the given setting keys. */
  changeConfig(values: Record<string, unknown>): void {
    Object.assign(this.config, values);
    const keys = Object.keys(values);
    this.onDidChangeConfiguration.fire({
      affectsConfiguration: (s: string) => keys.some((k) => k === s || k.startsWith(`${s}.`)),
    });
  },
};

export interface TextDocument {
  uri: Uri;
  languageId: string;
  version: number;
  getText(): string;
  lineAt(line: number): { text: string };
}
export interface TextEditor {
  document: TextDocument;
  selection: Selection;
  viewColumn?: ViewColumn;
  revealRange: ReturnType<typeof vi.fn>;
}

export function makeDocument(path: string, text: string, languageId = 'python'): TextDocument {
  const doc: TextDocument = {
    uri: Uri.file(path),
    languageId,
    version: 1,
    getText: () => text,
    lineAt: (l: number) => ({ text: text.split('\n')[l] ?? '' }),
  };
  mock.documents.set(doc.uri.toString(), doc);
  return doc;
}

export function makeEditor(doc: TextDocument, line = 0, character = 0): TextEditor {
  const p = new Position(line, character);
  return { document: doc, selection: new Selection(p, p), viewColumn: ViewColumn.One, revealRange: vi.fn() };
}

function configFor(section: string) {
  return {
    get: <T>(key: string, def?: T): T => {
      const full = `${section}.${key}`;
      return (full in mock.config ? mock.config[full] : def) as T;
    },
    has: (key: string) => `${section}.${key}` in mock.config,
    update: vi.fn(),
    inspect: vi.fn(),
  };
}

export interface FakeWebviewPanel {
  webview: {
    html: string;
    options: unknown;
    cspSource: string;
    asWebviewUri: (u: Uri) => Uri;
    postMessage: ReturnType<typeof vi.fn>;
    onDidReceiveMessage: (l: Listener<unknown>) => Disposable;
    /** test helper: a message from the page */
    receive(m: unknown): void;
  };
  title: string;
  viewType: string;
  reveal: ReturnType<typeof vi.fn>;
  dispose: ReturnType<typeof vi.fn>;
  onDidDispose: (l: Listener<void>) => Disposable;
}

export function makeWebviewPanel(viewType = 'tritonLens.accessMap'): FakeWebviewPanel {
  const received = new EventEmitter<unknown>();
  const disposed = new EventEmitter<void>();
  let isDisposed = false;
  const panel: FakeWebviewPanel = {
    webview: {
      html: '',
      options: {},
      cspSource: 'https://csp.example',
      asWebviewUri: (u: Uri) => Uri.parse(`https://webview.example${u.path}`),
      postMessage: vi.fn(async () => true),
      onDidReceiveMessage: received.event,
      receive: (m: unknown) => received.fire(m),
    },
    title: '',
    viewType,
    reveal: vi.fn(),
    dispose: vi.fn(() => {
      if (isDisposed) return;
      isDisposed = true;
      disposed.fire();
    }),
    onDidDispose: disposed.event,
  };
  return panel;
}

// ---------------------------------------------------------------- namespaces

export const window = {
  activeTextEditor: undefined as TextEditor | undefined,
  visibleTextEditors: [] as TextEditor[],
  createOutputChannel: vi.fn(() => makeLog()),
  createStatusBarItem: vi.fn(() => ({
    text: '',
    tooltip: '' as unknown,
    name: '',
    command: undefined as unknown,
    backgroundColor: undefined as unknown,
    show: vi.fn(),
    hide: vi.fn(),
    dispose: vi.fn(),
  })),
  createWebviewPanel: vi.fn((viewType: string) => makeWebviewPanel(viewType)),
  registerWebviewPanelSerializer: vi.fn(() => new Disposable()),
  showErrorMessage: vi.fn(async (..._a: unknown[]) => undefined as string | undefined),
  showWarningMessage: vi.fn(async (..._a: unknown[]) => undefined as string | undefined),
  showInformationMessage: vi.fn(async (..._a: unknown[]) => undefined as string | undefined),
  showInputBox: vi.fn(async (_o?: unknown) => undefined as string | undefined),
  showQuickPick: vi.fn(async (_items: unknown, _o?: unknown) => undefined as unknown),
  showTextDocument: vi.fn(async (doc: TextDocument, opts?: { selection?: Range }) => {
    const ed = makeEditor(doc, opts?.selection?.start.line ?? 0, opts?.selection?.start.character ?? 0);
    window.activeTextEditor = ed;
    return ed;
  }),
  onDidChangeTextEditorSelection: mock.onDidChangeTextEditorSelection.event,
  onDidChangeActiveTextEditor: mock.onDidChangeActiveTextEditor.event,
};

export function makeLog() {
  return {
    name: 'Triton Lens',
    logLevel: 2,
    trace: vi.fn(),
    debug: vi.fn(),
    info: vi.fn(),
    warn: vi.fn(),
    error: vi.fn(),
    append: vi.fn(),
    appendLine: vi.fn(),
    replace: vi.fn(),
    clear: vi.fn(),
    show: vi.fn(),
    hide: vi.fn(),
    dispose: vi.fn(),
    onDidChangeLogLevel: new EventEmitter<number>().event,
  };
}

export const workspace = {
  getConfiguration: vi.fn((section: string) => configFor(section)),
  get workspaceFolders() {
    return mock.workspaceFolders.length ? mock.workspaceFolders : undefined;
  },
  get isTrusted() {
    return mock.trusted;
  },
  notebookDocuments: [] as unknown[],
  getWorkspaceFolder: vi.fn((uri: Uri) => mock.workspaceFolders.find((f) => uri.path.startsWith(`${f.uri.path}/`))),
  openTextDocument: vi.fn(async (uri: Uri) => {
    const d = mock.documents.get(uri.toString());
    if (!d) throw new Error(`no such document ${uri.toString()}`);
    return d;
  }),
  onDidChangeConfiguration: mock.onDidChangeConfiguration.event,
  onDidGrantWorkspaceTrust: mock.onDidGrantWorkspaceTrust.event,
};

export const commands = {
  registerCommand: vi.fn((_id: string, _fn: (...a: unknown[]) => unknown) => new Disposable()),
  executeCommand: vi.fn(async (..._a: unknown[]) => undefined as unknown),
};

export const debug = {
  get breakpoints() {
    return mock.breakpoints;
  },
  addBreakpoints: vi.fn((bps: Breakpoint[]) => {
    mock.breakpoints.push(...bps);
  }),
  startDebugging: vi.fn(async (..._a: unknown[]) => true),
  registerDebugConfigurationProvider: vi.fn(() => new Disposable()),
  registerDebugAdapterDescriptorFactory: vi.fn(() => new Disposable()),
};

export const extensions = {
  getExtension: vi.fn((_id: string) => undefined as unknown),
};

export const env = {
  clipboard: { writeText: vi.fn(async (_s: string) => undefined) },
};

export const languages = {
  match: vi.fn(() => 0),
};
