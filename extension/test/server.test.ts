import * as path from 'path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { commands, EventEmitter, makeDocument, makeLog, mock, window } from 'vscode';

// A stand-in LanguageClient that records what it was given and lets tests send notifications.
const clients: FakeClient[] = [];
class FakeClient {
  state = 1; // Stopped
  handlers = new Map<string, (p: unknown) => void>();
  stateEmitter = new EventEmitter<{ oldState: number; newState: number }>();
  startError: Error | undefined;
  constructor(
    readonly spec: { command: string; args: string[]; env: NodeJS.ProcessEnv; cwd: string },
    readonly options: {
      initializationOptions: unknown;
      middleware: { provideInlayHints: (...args: unknown[]) => unknown };
      synchronize: unknown;
      documentSelector: unknown;
    },
  ) {
    clients.push(this);
  }
  onNotification(method: string, h: (p: unknown) => void) {
    this.handlers.set(method, h);
    return { dispose: () => this.handlers.delete(method) };
  }
  onDidChangeState = this.stateEmitter.event;
  start = vi.fn(async () => {
    if (this.startError) throw this.startError;
    this.state = 2;
  });
  stop = vi.fn(async () => {
    this.state = 1;
  });
  dispose = vi.fn(async () => {});
  sendRequest = vi.fn(async (method: string, params: unknown) => ({ method, params }));
  getFeature = vi.fn(() => undefined);
}

vi.mock('vscode-languageclient/node', () => ({
  State: { Stopped: 1, Running: 2, Starting: 3 },
  ErrorAction: { Continue: 1, Shutdown: 2 },
  CloseAction: { DoNotRestart: 1, Restart: 2 },
  InlayHintRequest: { method: 'textDocument/inlayHint' },
  LanguageClient: class {},
}));

const { ServerManager, serverLaunch, RUN_FINISHED, RUN_STARTED } = await import('../src/server');
const { StatusBar } = await import('../src/statusBar');

const REPO = path.resolve(__dirname, '../..');

function setup(
  opts: { check?: unknown; python?: { path: string; source: string }; pythonApi?: boolean; startError?: Error } = {},
) {
  const log = makeLog();
  const status = new StatusBar('tritonLens.showOutput');
  const changed = new EventEmitter<void>();
  const resolver = {
    onDidChange: changed.event,
    resolve: vi.fn(async () => opts.python ?? { path: '/py/bin/python', source: 'python-extension' }),
    pythonApi: vi.fn(async () => (opts.pythonApi ? {} : undefined)),
  };
  const check = vi.fn(
    async () => opts.check ?? { ok: true, probe: { executable: '/py/bin/python', version: [3, 11, 7], missing: [] } },
  );
  const mgr = new ServerManager('/ext', log as never, status, resolver as never, {
    check: check as never,
    createClient: (spec, options) => {
      const c = new FakeClient(spec, options as never);
      c.startError = opts.startError;
      return c as never;
    },
  });
  managers.push(mgr);
  return { mgr, log, status, changed, check, resolver };
}
const managers: { dispose(): Promise<void> }[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  vi.useRealTimers();
});

beforeEach(() => {
  mock.reset();
  clients.length = 0;
  vi.clearAllMocks();
});

describe('serverLaunch', () => {
  it('runs `python -m triton_lens lsp` with the bundled libs and the server package first on PYTHONPATH', () => {
    const s = serverLaunch('/py/bin/python', '/ext', { PYTHONPATH: '/user/path', HOME: '/h' }, '/ws');
    expect(s.command).toBe('/py/bin/python');
    expect(s.args).toEqual(['-m', 'triton_lens', 'lsp']);
    expect(s.env.PYTHONPATH).toBe(['/ext/bundled/libs', '/ext/server', '/user/path'].join(path.delimiter));
    expect(s.env.HOME).toBe('/h');
    expect(s.env.TRITON_LENS_BUNDLED_LIBS).toBe('/ext/bundled/libs');
    expect(s.cwd).toBe('/ws');
  });
});

describe('ServerManager', () => {
  it('starts the client with the checked interpreter, settings and trust in initializationOptions', async () => {
    mock.config = { 'tritonLens.timeLimit': 7 };
    const { mgr, status } = setup();
    await mgr.start();
    expect(clients).toHaveLength(1);
    const c = clients[0];
    expect(c.spec.command).toBe('/py/bin/python');
    expect(c.options.initializationOptions).toMatchObject({
      trusted: true,
      settings: { timeLimit: 7, inlayHints: true, python: '/py/bin/python' },
    });
    expect(c.spec.cwd).toBe(path.join('/ext', 'server')); // not the workspace: it would come first on sys.path
    expect(c.options.synchronize).toEqual({ configurationSection: 'tritonLens' });
    expect(mgr.isRunning).toBe(true);
    expect(status.current()).toEqual({ kind: 'idle' });
  });

  it('serves Python files and the Python cells of notebooks and the interactive window', async () => {
    const { mgr } = setup();
    await mgr.start();
    expect(clients[0].options.documentSelector).toEqual([
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
      { notebook: 'jupyter-notebook', language: 'python' },
      { notebook: 'interactive', language: 'python' },
    ]);
  });

  it('relays runStarted/runFinished to the status bar and to listeners', async () => {
    const { mgr, status } = setup();
    const finished = vi.fn();
    mgr.onRunFinished(finished);
    await mgr.start();
    clients[0].handlers.get(RUN_STARTED)!({ uri: 'file:///w/k.py', version: 1 });
    expect(status.current()).toEqual({ kind: 'running', uri: 'file:///w/k.py' });
    const p = { uri: 'file:///w/k.py', version: 1, status: 'ok', ms: 120, launches: 2 };
    clients[0].handlers.get(RUN_FINISHED)!(p);
    expect(status.current()).toEqual({ kind: 'done', uri: 'file:///w/k.py', ms: 120, launches: 2 });
    expect(finished).toHaveBeenCalledWith(p);
  });

  it('runs nothing in an untrusted workspace, and starts once trust is granted', async () => {
    mock.trusted = false;
    const { mgr, status, check } = setup();
    await mgr.start();
    expect(clients).toHaveLength(0);
    expect(check).not.toHaveBeenCalled(); // not even the interpreter probe runs
    expect(status.current()).toEqual({ kind: 'restricted' });
    vi.useFakeTimers();
    mock.trusted = true;
    mock.onDidGrantWorkspaceTrust.fire();
    await vi.advanceTimersByTimeAsync(400);
    vi.useRealTimers();
    await mgr.request('x', {});
    expect(clients).toHaveLength(1);
  });

  it('does not start without triton/torch/numpy and says how to fix it', async () => {
    const message = 'Triton Lens needs triton in /py/bin/python: run `/py/bin/python -m pip install triton`';
    window.showErrorMessage.mockResolvedValueOnce('Select Interpreter');
    const { mgr, status } = setup({ check: { ok: false, reason: 'missing', message }, pythonApi: true });
    await mgr.start();
    expect(clients).toHaveLength(0);
    expect(status.current()).toEqual({ kind: 'setup', message });
    await vi.waitFor(() => expect(commands.executeCommand).toHaveBeenCalledWith('python.setInterpreter'));
    expect(window.showErrorMessage).toHaveBeenCalledWith(
      message,
      'Select Interpreter',
      'Open Settings',
      'Copy Install Command',
    );
    await expect(mgr.request('tritonLens/kernels', {})).rejects.toThrow(message);
  });

  it('offers no "Select Interpreter" when the setting chose the interpreter, and copies the fix', async () => {
    const message = 'Triton Lens needs torch in /x/python: run `/x/python -m pip install torch`';
    window.showErrorMessage.mockResolvedValueOnce('Copy Install Command');
    const { mgr } = setup({
      check: { ok: false, reason: 'missing', message },
      python: { path: '/x/python', source: 'setting' },
      pythonApi: true,
    });
    await mgr.start();
    const { env } = await import('vscode');
    await vi.waitFor(() => expect(env.clipboard.writeText).toHaveBeenCalledWith('/x/python -m pip install torch'));
    expect(window.showErrorMessage).toHaveBeenCalledWith(message, 'Open Settings', 'Copy Install Command');
  });

  it('restarts (stopping the old client) when tritonLens.python or the selected interpreter changes', async () => {
    vi.useFakeTimers();
    const { mgr, changed } = setup();
    await mgr.start();
    mock.changeConfig({ 'tritonLens.timeLimit': 3 }); // sent to the server, no restart
    await vi.advanceTimersByTimeAsync(1000);
    expect(clients).toHaveLength(1);
    mock.changeConfig({ 'tritonLens.python': '/other/python' });
    await vi.advanceTimersByTimeAsync(400);
    expect(clients).toHaveLength(2);
    expect(clients[0].stop).toHaveBeenCalled();
    changed.fire();
    changed.fire(); // debounced into one restart
    await vi.advanceTimersByTimeAsync(400);
    expect(clients).toHaveLength(3);
    vi.useRealTimers();
  });

  it('reports a server that fails to start', async () => {
    const { mgr, status, log } = setup({ startError: new Error('spawn /py/bin/python EACCES') });
    await mgr.start();
    expect(mgr.isRunning).toBe(false);
    expect(status.current()).toMatchObject({ kind: 'stopped' });
    expect((status.current() as { message: string }).message).toContain('spawn /py/bin/python EACCES');
    expect(log.error).toHaveBeenCalled();
    expect(window.showErrorMessage).toHaveBeenCalledWith(expect.stringContaining('failed to start'), 'Show Output');
  });

  it('restarts a server that died, with a message, at most three times a minute', async () => {
    vi.useFakeTimers();
    const { mgr, status } = setup();
    await mgr.start();
    const die = async () => {
      const c = clients[clients.length - 1];
      c.state = 1;
      c.stateEmitter.fire({ oldState: 2, newState: 1 }); // the process exited on its own
      await vi.advanceTimersByTimeAsync(400);
    };
    for (let i = 1; i <= 3; i++) {
      await die();
      expect(clients).toHaveLength(1 + i);
      expect(mgr.isRunning).toBe(true);
    }
    expect(window.showWarningMessage).toHaveBeenCalledTimes(3);
    expect(window.showWarningMessage).toHaveBeenCalledWith(
      expect.stringContaining('stopped unexpectedly and is being restarted'),
    );
    await die(); // the fourth within a minute: left stopped, and the user is told how to start it
    expect(clients).toHaveLength(4);
    expect(mgr.isRunning).toBe(false);
    expect(status.current()).toMatchObject({ kind: 'stopped' });
    expect(window.showErrorMessage).toHaveBeenCalledWith(expect.stringContaining('Restart Server'), 'Show Output');
    await vi.advanceTimersByTimeAsync(61_000); // a minute later it is restarted again
    await mgr.restart('user');
    await die();
    expect(clients).toHaveLength(6);
    expect(mgr.isRunning).toBe(true);
    vi.useRealTimers();
  });

  it('does not restart a server it stopped itself', async () => {
    vi.useFakeTimers();
    const { mgr } = setup();
    await mgr.start();
    const first = clients[0];
    first.stop.mockImplementationOnce(async () => {
      first.state = 1;
      first.stateEmitter.fire({ oldState: 2, newState: 1 });
    });
    await mgr.restart('tritonLens.python changed');
    await vi.advanceTimersByTimeAsync(1000);
    expect(clients).toHaveLength(2);
    expect(window.showWarningMessage).not.toHaveBeenCalled();
    vi.useRealTimers();
  });

  it('answers workspace/configuration with the resolved interpreter, not the raw setting', async () => {
    mock.config = { 'tritonLens.python': '${workspaceFolder}/.venv/bin/python' };
    const { mgr } = setup({ python: { path: '/ws/.venv/bin/python', source: 'setting' } });
    await mgr.start();
    const cfg = (
      clients[0].options.middleware as unknown as { workspace: { configuration: (...args: never[]) => unknown } }
    ).workspace.configuration;
    const next = vi.fn(async () => [{ python: '${workspaceFolder}/.venv/bin/python', timeLimit: 9 }, { other: 1 }]);
    const out = await cfg({ items: [{ section: 'tritonLens' }, { section: 'editor' }] }, {}, next);
    expect(out).toEqual([{ python: '/ws/.venv/bin/python', timeLimit: 9 }, { other: 1 }]);
  });

  it('drops inlay hints client-side when tritonLens.inlayHints is off', async () => {
    const { mgr } = setup();
    await mgr.start();
    const mw = clients[0].options.middleware.provideInlayHints;
    const doc = makeDocument('/w/k.py', '');
    const next = vi.fn(() => ['hint']);
    expect(mw(doc, {}, {}, next)).toEqual(['hint']);
    mock.config = { 'tritonLens.inlayHints': false };
    expect(mw(doc, {}, {}, next)).toEqual([]);
  });

  it('forwards custom requests to the running server', async () => {
    const { mgr } = setup();
    await mgr.start();
    expect(await mgr.request('tritonLens/kernels', { uri: 'file:///w/k.py' })).toEqual({
      method: 'tritonLens/kernels',
      params: { uri: 'file:///w/k.py' },
    });
    // exactly (method, params): an extra undefined argument would be sent as positional params
    expect(clients[0].sendRequest.mock.calls[0]).toEqual(['tritonLens/kernels', { uri: 'file:///w/k.py' }]);
  });
});

describe('the packaged server layout', () => {
  it('has the triton_lens package and its __main__ where serverLaunch points', async () => {
    const fs = await import('fs');
    expect(fs.existsSync(path.join(REPO, 'server', 'triton_lens', '__main__.py'))).toBe(true);
  });
});
