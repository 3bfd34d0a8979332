// The access-map webview panel: loads extension/webview/ (PROTOCOL.md), answers the page's requests with the
// server's tritonLens/* custom requests (the viewer protocol: types generated from its JSON Schema in
// viewerProtocol.ts), forwards cursor/refresh/select events, reveals lines it asks for, and comes back after a
// reload (WebviewPanelSerializer + onWebviewPanel activation).
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  LSP_METHODS,
  type KernelsResult,
  type LspMethod,
  type ViewerParams,
  type ViewerResult,
} from './viewerProtocol';
import { editorLocation, namedAsShown, openCellIndex, type EditorLocation } from './sourceLines';
import { fillTemplate, makeNonce } from './webviewHtml';

export const VIEW_TYPE = 'tritonLens.accessMap';
const LAST_URI_KEY = 'tritonLens.accessMap.uri';

/** What the panel needs from the server. */
export interface ServerLink {
  request<R>(method: string, params: unknown): Promise<R>;
  onRunFinished: vscode.Event<{ uri: string }>;
  onDidStart: vscode.Event<void>;
}

export type HostEvent =
  | { type: 'cursor'; file: string; line: number }
  | { type: 'refresh' }
  | { type: 'select'; kernel: string; file: string; line?: number };

type PageMessage =
  | { type: 'ready' }
  | { type: 'request'; id: number; method: string; params?: Record<string, unknown> }
  | { type: 'reveal'; file: string; line: number; col?: number };

/** The page's methods the panel forwards, with their LSP request names (from the protocol's schema). */
export const PAGE_METHODS: Readonly<Record<LspMethod, string>> = LSP_METHODS;

export function isPageMethod(method: unknown): method is LspMethod {
  return typeof method === 'string' && Object.prototype.hasOwnProperty.call(PAGE_METHODS, method);
}

/** The LSP params of a page request: the page's params (the server validates them) plus the document. */
export type ServerParams<M extends LspMethod> = ViewerParams<M> & { uri: string };

export class AccessMapPanel implements vscode.Disposable {
  private ready = false;
  private queued: HostEvent[] = [];
  /** Source files of the kernels and launches in the last overview the page got (plus the document). */
  private files = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;
  private readonly closed = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.closed.event;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private uri: vscode.Uri,
    private readonly extensionUri: vscode.Uri,
    private readonly server: ServerLink,
    private readonly log: vscode.LogOutputChannel,
  ) {
    panel.webview.options = webviewOptions(extensionUri);
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: PageMessage) => this.onMessage(m)),
      panel.onDidDispose(() => this.dispose()),
      server.onRunFinished((p) => {
        if (p.uri === this.uri.toString()) this.post({ type: 'refresh' });
      }),
      server.onDidStart(() => this.post({ type: 'refresh' })),
    );
    this.updateTitle();
    this.load();
  }

  get documentUri(): vscode.Uri {
    return this.uri;
  }

  /** Whether the cursor in `file` concerns this view: the document, or a file its kernels/launches are in. */
  shows(file: string): boolean {
    return file === this.uri.fsPath || this.files.has(file);
  }

  /** Shows another file's results (reloads the page so nothing of the old file lingers). */
  setDocument(uri: vscode.Uri): void {
    if (uri.toString() === this.uri.toString()) return;
    this.uri = uri;
    this.files = new Set();
    this.updateTitle();
    this.load();
  }

  /** Sends an event now, or once the page says it is ready. */
  post(ev: HostEvent): void {
    if (this.disposed) return;
    if (!this.ready) {
      // one refresh is enough; a later select/cursor replaces an earlier one of its kind
      this.queued = this.queued.filter((q) => q.type !== ev.type);
      this.queued.push(ev);
      return;
    }
    void this.panel.webview.postMessage(ev);
  }

  private load(): void {
    this.ready = false;
    this.panel.webview.html = pageHtml(this.panel.webview, this.extensionUri);
  }

  private updateTitle(): void {
    this.panel.title = `Access map: ${path.basename(this.uri.fsPath || this.uri.path)}`;
  }

  private async onMessage(m: PageMessage): Promise<void> {
    if (!m || typeof m !== 'object') return;
    if (m.type === 'ready') {
      this.ready = true;
      const q = this.queued;
      this.queued = [];
      for (const ev of q) void this.panel.webview.postMessage(ev);
    } else if (m.type === 'request') {
      await this.answer(m);
    } else if (m.type === 'reveal') {
      await this.reveal(m.file, m.line, m.col);
    }
  }

  /** Shows a line the page names, where the editor has it: in a notebook, the cell and the line inside it. */
  private async reveal(file: string, line: number, col?: number): Promise<void> {
    let at: EditorLocation | null;
    try {
      at = await editorLocation(this.server, this.uri, file, line);
    } catch (e) {
      // the server is not running (or predates the request): a file's line is the page's
      this.log.warn(`reveal ${file}:${line}: ${e instanceof Error ? e.message : String(e)}`);
      at = { uri: file, line };
    }
    if (at) await revealLine(at.uri, at.line, col);
  }

  private async answer(m: Extract<PageMessage, { type: 'request' }>): Promise<void> {
    let reply: { type: 'response'; id: number; result?: ViewerResult<LspMethod> | null; error?: { message: string } };
    if (!isPageMethod(m.method)) {
      reply = { type: 'response', id: m.id, error: { message: `unknown method ${m.method}` } };
    } else {
      const method = PAGE_METHODS[m.method];
      try {
        let result: ViewerResult<LspMethod>;
        if (m.method === 'kernels') {
          const overview = await this.forward('kernels', m.params);
          this.files = overviewFiles(overview);
          result = namedAsShown(overview, (uri) => openCellIndex(vscode.workspace.notebookDocuments, uri));
        } else {
          result = await this.forward(m.method, m.params);
        }
        reply = { type: 'response', id: m.id, result: result ?? null };
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        this.log.warn(`${method} failed: ${message}`);
        reply = { type: 'response', id: m.id, error: { message } };
      }
    }
    if (!this.disposed) void this.panel.webview.postMessage(reply);
  }

  /** One page request as the server's custom request for this document. */
  private forward<M extends LspMethod>(
    method: M,
    params: Record<string, unknown> | undefined,
  ): Promise<ViewerResult<M>> {
    // The page's params are forwarded as sent: the server's viewer service checks them against the protocol.
    const p = { ...(params ?? {}), uri: this.uri.toString() } as ServerParams<M>;
    return this.server.request<ViewerResult<M>>(PAGE_METHODS[method], p);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.closed.fire();
    this.closed.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}

/** The files named by a kernels overview: {kernels: [{file, launches: [{file}]}]} (checked: it came over the wire). */
export function overviewFiles(ov: KernelsResult | null | undefined): Set<string> {
  const out = new Set<string>();
  const kernels = (ov as { kernels?: { file?: unknown; launches?: { file?: unknown }[] }[] } | null)?.kernels;
  for (const k of Array.isArray(kernels) ? kernels : []) {
    if (typeof k?.file === 'string') out.add(k.file);
    for (const l of Array.isArray(k?.launches) ? k.launches : []) if (typeof l?.file === 'string') out.add(l.file);
  }
  return out;
}

export function webviewRoot(extensionUri: vscode.Uri): vscode.Uri {
  return vscode.Uri.joinPath(extensionUri, 'extension', 'webview');
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, enableForms: false, localResourceRoots: [webviewRoot(extensionUri)] };
}

export function pageHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const root = webviewRoot(extensionUri);
  const template = fs.readFileSync(path.join(root.fsPath, 'index.html'), 'utf8');
  return fillTemplate(template, {
    nonce: makeNonce(),
    cspSource: webview.cspSource,
    base: webview.asWebviewUri(root).toString(),
  });
}

/** Opens `file` (an absolute path or a URI string) and puts the cursor on 1-based `line`. */
export async function revealLine(file: string, line: number, col?: number): Promise<void> {
  const uri =
    /^[a-z][\w+.-]+:/i.test(file) && !/^[a-z]:[\\/]/i.test(file) ? vscode.Uri.parse(file) : vscode.Uri.file(file);
  const l = Math.max(0, Math.floor(Number(line) || 1) - 1);
  const c = Math.max(0, Math.floor(Number(col) || 0));
  const pos = new vscode.Position(l, c);
  const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString());
  const doc = visible?.document ?? (await vscode.workspace.openTextDocument(uri));
  const editor = await vscode.window.showTextDocument(doc, {
    viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One,
    preserveFocus: false,
    selection: new vscode.Range(pos, pos),
  });
  editor.selection = new vscode.Selection(pos, pos);
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** Owns the one access-map panel: opening it, pointing it at a file/kernel, and restoring it. */
export class AccessMapManager implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private current: AccessMapPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: Pick<vscode.ExtensionContext, 'extensionUri' | 'workspaceState'>,
    private readonly server: ServerLink,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, this));
  }

  get panel(): AccessMapPanel | undefined {
    return this.current;
  }

  /** Opens (or reuses) the panel beside the editor and shows `kernel` of `uri`. */
  show(uri: vscode.Uri, kernel?: string, line?: number): AccessMapPanel {
    let p = this.current;
    if (p) {
      p.setDocument(uri);
      p.panel.reveal(vscode.ViewColumn.Beside, true);
    } else {
      const panel = vscode.window.createWebviewPanel(
        VIEW_TYPE,
        'Access map',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { ...webviewOptions(this.context.extensionUri), retainContextWhenHidden: true },
      );
      p = this.adopt(panel, uri);
    }
    void this.context.workspaceState.update(LAST_URI_KEY, uri.toString());
    if (kernel) p.post({ type: 'select', kernel, file: uri.fsPath, ...(line ? { line } : {}) });
    return p;
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const saved = this.context.workspaceState.get<string>(LAST_URI_KEY);
    const s = (state && typeof state === 'object' ? state : {}) as { kernelFile?: unknown };
    const uri = saved
      ? vscode.Uri.parse(saved)
      : typeof s.kernelFile === 'string' && s.kernelFile
        ? vscode.Uri.file(s.kernelFile)
        : undefined;
    if (!uri) {
      panel.dispose();
      return;
    }
    this.current?.dispose();
    this.adopt(panel, uri);
  }

  private adopt(panel: vscode.WebviewPanel, uri: vscode.Uri): AccessMapPanel {
    const p = new AccessMapPanel(panel, uri, this.context.extensionUri, this.server, this.log);
    this.current = p;
    p.onDidDispose(() => {
      if (this.current === p) this.current = undefined;
    });
    return p;
  }

  dispose(): void {
    this.current?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
