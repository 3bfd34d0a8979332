import * as path from 'path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventEmitter, makeDocument, makeLog, makeWebviewPanel, mock, Uri, window } from 'vscode';
import { AccessMapManager, AccessMapPanel, PAGE_METHODS, pageHtml, VIEW_TYPE } from '../src/accessMapPanel';

const REPO = path.resolve(__dirname, '../..');
const extUri = Uri.file(REPO);

function server() {
  const finished = new EventEmitter<{ uri: string }>();
  const started = new EventEmitter<void>();
  return {
    finished,
    started,
    link: {
      request: vi.fn(async (method: string, params: unknown) => ({ method, params })),
      onRunFinished: finished.event,
      onDidStart: started.event,
    },
  };
}

function memento() {
  const m = new Map<string, unknown>();
  return {
    get: vi.fn((k: string) => m.get(k)),
    update: vi.fn(async (k: string, v: unknown) => void m.set(k, v)),
    keys: () => [...m.keys()],
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

const disposables: { dispose(): void }[] = [];
beforeEach(() => {
  mock.reset();
  vi.clearAllMocks();
});
afterEach(() => {
  for (const d of disposables.splice(0)) d.dispose();
});

describe('pageHtml', () => {
  it('fills nonce, cspSource and base into the real index.html, with a strict CSP', () => {
    const panel = makeWebviewPanel();
    const html = pageHtml(panel.webview as never, extUri as never);
    expect(html).not.toMatch(/\{\{\w+\}\}/);
    const nonce = /script-src 'nonce-([A-Za-z0-9]+)'/.exec(html)?.[1];
    expect(nonce && nonce.length).toBeGreaterThanOrEqual(16);
    expect(html).toContain(`nonce="${nonce}"`);
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('style-src https://csp.example');
    expect(html).toContain(`src="https://webview.example${REPO}/extension/webview/viewer.js"`);
    expect(html).not.toMatch(/https?:\/\/(?!csp\.example|webview\.example)[\w.-]+\//); // no CDN
    expect(pageHtml(panel.webview as never, extUri as never)).not.toContain(nonce); // fresh per load
  });
});

describe('AccessMapPanel', () => {
  function open(uri = Uri.file('/w/k.py')) {
    const s = server();
    const panel = makeWebviewPanel();
    const p = new AccessMapPanel(panel as never, uri as never, extUri as never, s.link as never, makeLog() as never);
    disposables.push(p);
    return { s, panel, p };
  }

  it('restricts the webview to the page folder, scripts on, forms off', () => {
    const { panel } = open();
    expect(panel.webview.options).toEqual({
      enableScripts: true,
      enableForms: false,
      localResourceRoots: [Uri.joinPath(extUri, 'extension', 'webview')],
    });
    expect(panel.title).toBe('Access map: k.py');
  });

  it("answers the page's requests with the server's custom requests, adding the document uri", async () => {
    const { s, panel } = open();
    panel.webview.receive({ type: 'request', id: 7, method: 'accessMap', params: { launch: 0, tensor: 1 } });
    await flush();
    expect(s.link.request).toHaveBeenCalledWith('tritonLens/accessMap', {
      launch: 0,
      tensor: 1,
      uri: 'file:///w/k.py',
    });
    expect(panel.webview.postMessage).toHaveBeenCalledWith({
      type: 'response',
      id: 7,
      result: { method: 'tritonLens/accessMap', params: { launch: 0, tensor: 1, uri: 'file:///w/k.py' } },
    });
    expect(Object.keys(PAGE_METHODS).sort()).toEqual([
      'accessMap',
      'dotTiles',
      'dots',
      'kernels',
      'performance',
      'valueMap',
      'values',
    ]);
  });

  it('learns from the kernels overview which files the view shows', async () => {
    const { s, panel, p } = open();
    expect(p.shows('/w/k.py')).toBe(true);
    expect(p.shows('/w/lib.py')).toBe(false);
    s.link.request.mockResolvedValueOnce({
      file: '/w/k.py',
      kernels: [{ name: 'k', file: '/w/lib.py', line: 3, launches: [{ index: 0, file: '/w/k.py', line: 20 }] }],
    } as never);
    panel.webview.receive({ type: 'request', id: 3, method: 'kernels', params: {} });
    await flush();
    expect(p.shows('/w/lib.py')).toBe(true);
    expect(p.shows('/w/unrelated.py')).toBe(false);
  });

  it('passes server errors and unknown methods back as errors', async () => {
    const { s, panel } = open();
    s.link.request.mockRejectedValueOnce(new Error('The Triton Lens server is not running.'));
    panel.webview.receive({ type: 'request', id: 1, method: 'kernels', params: {} });
    panel.webview.receive({ type: 'request', id: 2, method: 'rm -rf', params: {} });
    await flush();
    expect(panel.webview.postMessage).toHaveBeenCalledWith({
      type: 'response',
      id: 1,
      error: { message: 'The Triton Lens server is not running.' },
    });
    expect(panel.webview.postMessage).toHaveBeenCalledWith({
      type: 'response',
      id: 2,
      error: { message: 'unknown method rm -rf' },
    });
  });

  it('holds events until the page is ready, keeping the last of each kind', () => {
    const { panel, p } = open();
    p.post({ type: 'cursor', file: '/w/k.py', line: 3 });
    p.post({ type: 'refresh' });
    p.post({ type: 'cursor', file: '/w/k.py', line: 9 });
    expect(panel.webview.postMessage).not.toHaveBeenCalled();
    panel.webview.receive({ type: 'ready' });
    expect(panel.webview.postMessage.mock.calls.map((c) => c[0])).toEqual([
      { type: 'refresh' },
      { type: 'cursor', file: '/w/k.py', line: 9 },
    ]);
    p.post({ type: 'cursor', file: '/w/k.py', line: 10 });
    expect(panel.webview.postMessage).toHaveBeenLastCalledWith({ type: 'cursor', file: '/w/k.py', line: 10 });
  });

  it('refreshes when the server finished a run of its file (and only its file), or restarted', () => {
    const { s, panel } = open();
    panel.webview.receive({ type: 'ready' });
    s.finished.fire({ uri: 'file:///w/other.py' });
    expect(panel.webview.postMessage).not.toHaveBeenCalled();
    s.finished.fire({ uri: 'file:///w/k.py' });
    s.started.fire();
    expect(panel.webview.postMessage.mock.calls.map((c) => c[0])).toEqual([{ type: 'refresh' }, { type: 'refresh' }]);
  });

  it('reveals the line the page asks for (1-based) in the editor', async () => {
    const doc = makeDocument('/w/k.py', 'a\nb\nc\nd\n');
    const { panel, s } = open();
    s.link.request.mockRejectedValueOnce(new Error('The Triton Lens server is not running.')); // the page's line as is
    panel.webview.receive({ type: 'reveal', file: '/w/k.py', line: 3 });
    await vi.waitFor(() => expect(window.showTextDocument).toHaveBeenCalled());
    const [shown, opts] = window.showTextDocument.mock.calls[0] as [
      unknown,
      { selection: { start: { line: number } } },
    ];
    expect(shown).toBe(doc);
    expect(opts.selection.start.line).toBe(2);
    const ed = window.activeTextEditor!;
    await vi.waitFor(() => expect(ed.revealRange).toHaveBeenCalled());
    expect(ed.selection.active.line).toBe(2);
  });

  it("reveals a notebook's line in the cell and at the line the server maps it to", async () => {
    const cellUri = Uri.parse('vscode-notebook-cell:/w/nb.ipynb#W2sZmlsZQ%3D%3D');
    const cell = { ...makeDocument('/w/cell', 'a\nb\nc\nd\ne\n'), uri: cellUri };
    mock.documents.set(cellUri.toString(), cell as never);
    const { panel, s } = open(Uri.file('/w/nb.ipynb'));
    s.link.request.mockResolvedValueOnce({ uri: 'vscode-notebook-cell:/w/nb.ipynb#W2sZmlsZQ%3D%3D', line: 5 });
    panel.webview.receive({ type: 'reveal', file: '/w/nb.ipynb', line: 14 }); // the script's line 14
    await vi.waitFor(() => expect(window.showTextDocument).toHaveBeenCalled());
    expect(s.link.request).toHaveBeenCalledWith('tritonLens/editorLocation', {
      uri: 'file:///w/nb.ipynb',
      file: '/w/nb.ipynb',
      line: 14,
    });
    const [shown, opts] = window.showTextDocument.mock.calls[0] as [
      unknown,
      { selection: { start: { line: number } } },
    ];
    expect(shown).toBe(cell);
    expect(opts.selection.start.line).toBe(4);
    // a line in no cell (the server answers null) shows nothing, rather than the notebook's JSON
    s.link.request.mockResolvedValueOnce(null);
    panel.webview.receive({ type: 'reveal', file: '/w/nb.ipynb', line: 99 });
    await flush();
    await flush();
    expect(window.showTextDocument).toHaveBeenCalledTimes(1);
  });

  it('reloads the page for another file and stops talking after dispose', () => {
    const { panel, p } = open();
    const first = panel.webview.html;
    p.setDocument(Uri.file('/w/two.py') as never);
    expect(panel.webview.html).not.toBe(first);
    expect(panel.title).toBe('Access map: two.py');
    panel.dispose();
    p.post({ type: 'refresh' });
    panel.webview.receive({ type: 'ready' });
    expect(panel.webview.postMessage).not.toHaveBeenCalled();
  });
});

describe('AccessMapManager', () => {
  it('registers the serializer, opens one panel beside the editor and selects the kernel', () => {
    const s = server();
    const ws = memento();
    const mgr = new AccessMapManager(
      { extensionUri: extUri, workspaceState: ws } as never,
      s.link as never,
      makeLog() as never,
    );
    disposables.push(mgr);
    expect(window.registerWebviewPanelSerializer).toHaveBeenCalledWith(VIEW_TYPE, mgr);
    const p1 = mgr.show(Uri.file('/w/k.py') as never, 'add_kernel', 8);
    expect(window.createWebviewPanel).toHaveBeenCalledTimes(1);
    const [, , where, options] = window.createWebviewPanel.mock.calls[0] as unknown as [string, string, object, object];
    expect(where).toEqual({ viewColumn: -2, preserveFocus: true });
    expect(options).toMatchObject({ enableScripts: true, retainContextWhenHidden: true });
    const panel = window.createWebviewPanel.mock.results[0].value;
    panel.webview.receive({ type: 'ready' });
    expect(panel.webview.postMessage).toHaveBeenCalledWith({
      type: 'select',
      kernel: 'add_kernel',
      file: '/w/k.py',
      line: 8,
    });
    const p2 = mgr.show(Uri.file('/w/k.py') as never, 'mul_kernel');
    expect(p2).toBe(p1);
    expect(window.createWebviewPanel).toHaveBeenCalledTimes(1);
    expect(ws.update).toHaveBeenCalledWith('tritonLens.accessMap.uri', 'file:///w/k.py');
  });

  it('restores a panel after a reload for the file it showed', async () => {
    const s = server();
    const ws = memento();
    await ws.update('tritonLens.accessMap.uri', 'file:///w/k.py');
    const mgr = new AccessMapManager(
      { extensionUri: extUri, workspaceState: ws } as never,
      s.link as never,
      makeLog() as never,
    );
    disposables.push(mgr);
    const panel = makeWebviewPanel();
    await mgr.deserializeWebviewPanel(panel as never, { kernel: 'add_kernel', kernelFile: '/w/k.py' });
    expect(mgr.panel?.documentUri.toString()).toBe('file:///w/k.py');
    expect(panel.webview.html).toContain('viewer.js');
    panel.webview.receive({ type: 'request', id: 1, method: 'kernels', params: {} });
    await flush();
    expect(s.link.request).toHaveBeenCalledWith('tritonLens/kernels', { uri: 'file:///w/k.py' });
  });

  it("falls back to the page state's kernel file, and closes a panel it cannot place", async () => {
    const mgr = new AccessMapManager(
      { extensionUri: extUri, workspaceState: memento() } as never,
      server().link as never,
      makeLog() as never,
    );
    disposables.push(mgr);
    const a = makeWebviewPanel();
    await mgr.deserializeWebviewPanel(a as never, { kernelFile: '/w/from_state.py' });
    expect(mgr.panel?.documentUri.fsPath).toBe('/w/from_state.py');
    const b = makeWebviewPanel();
    await mgr.deserializeWebviewPanel(b as never, undefined);
    expect(b.dispose).toHaveBeenCalled();
  });
});
