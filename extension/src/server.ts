// The language server's lifecycle: pick the interpreter, check it, start `<python> -m triton_lens lsp` with the
// bundled pygls on PYTHONPATH, restart it when the interpreter changes, and relay its run notifications.
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  InlayHintRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { LSP_NOTIFICATIONS } from './lspMessages';
import { checkInterpreter, type CheckResult, type Interpreter, InterpreterResolver } from './python';
import { getSettings, needsRestart, SECTION, type TritonLensSettings } from './settings';
import type { RunFinishedParams, RunPartialParams, RunStartedParams, StatusBar } from './statusBar';

export const RUN_STARTED = LSP_NOTIFICATIONS.runStarted;
export const RUN_FINISHED = LSP_NOTIFICATIONS.runFinished;
export const RUN_PARTIAL = LSP_NOTIFICATIONS.runPartial;
export const RESTART_DELAY_MS = 300;
/** A server that dies is started again, at most this many times in AUTO_RESTART_WINDOW_MS. */
export const MAX_AUTO_RESTARTS = 3;
export const AUTO_RESTART_WINDOW_MS = 60_000;

export interface LaunchSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** Where the .vsix keeps the server's pure-Python libraries and the triton_lens package. */
/**
 * The documents the server serves: Python files, and the Python cells of Jupyter notebooks and of the
 * interactive window. The server announces notebook sync for the same two notebook types, so a cell
 * reaches it as part of its notebook (all code cells run as one script) and hints, hovers and
 * diagnostics come back on the cell.
 */
export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
  { notebook: 'jupyter-notebook', language: 'python' },
  { notebook: 'interactive', language: 'python' },
];

export function serverPaths(extensionPath: string): { libs: string; server: string } {
  return { libs: path.join(extensionPath, 'bundled', 'libs'), server: path.join(extensionPath, 'server') };
}

/** `<python> -m triton_lens lsp`, bundled libraries first on PYTHONPATH, then the server package. */
export function serverLaunch(
  python: string,
  extensionPath: string,
  baseEnv: NodeJS.ProcessEnv,
  cwd: string,
): LaunchSpec {
  const { libs, server } = serverPaths(extensionPath);
  const pythonPath = [libs, server, ...(baseEnv.PYTHONPATH ? [baseEnv.PYTHONPATH] : [])].join(path.delimiter);
  return {
    command: python,
    args: ['-m', 'triton_lens', 'lsp'],
    env: {
      ...baseEnv,
      PYTHONPATH: pythonPath,
      // The runner can drop these from a traced script's path so that the user's code sees its own packages.
      TRITON_LENS_BUNDLED_LIBS: libs,
      PYTHONIOENCODING: 'utf-8',
    },
    cwd,
  };
}

export interface InitializationOptions {
  trusted: boolean;
  settings: TritonLensSettings;
}

export function initializationOptions(trusted: boolean, settings: TritonLensSettings): InitializationOptions {
  return { trusted, settings };
}

export interface ServerEvents {
  onRunStarted: vscode.Event<RunStartedParams>;
  onRunFinished: vscode.Event<RunFinishedParams>;
  onDidStart: vscode.Event<void>;
}

type ClientFactory = (spec: LaunchSpec, options: LanguageClientOptions, log: vscode.LogOutputChannel) => LanguageClient;

const defaultClientFactory: ClientFactory = (spec, options) => {
  const serverOptions: ServerOptions = {
    command: spec.command,
    args: spec.args,
    options: { env: spec.env, cwd: spec.cwd },
  };
  return new LanguageClient('tritonLens', 'Triton Lens', serverOptions, options);
};

export class ServerManager implements vscode.Disposable, ServerEvents {
  private client: LanguageClient | undefined;
  private clientSubs: vscode.Disposable[] = [];
  private queue: Promise<void> = Promise.resolve();
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  /** When the server was last restarted because it died (for the rate limit). */
  private autoRestarts: number[] = [];
  private readonly started = new vscode.EventEmitter<void>();
  private readonly runStarted = new vscode.EventEmitter<RunStartedParams>();
  private readonly runFinished = new vscode.EventEmitter<RunFinishedParams>();
  readonly onDidStart = this.started.event;
  readonly onRunStarted = this.runStarted.event;
  readonly onRunFinished = this.runFinished.event;
  private readonly disposables: vscode.Disposable[] = [this.started, this.runStarted, this.runFinished];
  /** The interpreter of the running (or last tried) server. */
  interpreter: Interpreter | undefined;
  lastCheck: CheckResult | undefined;

  constructor(
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusBar,
    private readonly resolver: InterpreterResolver,
    private readonly deps: { check?: typeof checkInterpreter; createClient?: ClientFactory } = {},
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (needsRestart(e)) this.scheduleRestart('tritonLens.python changed');
        else if (e.affectsConfiguration(`${SECTION}.inlayHints`)) this.refreshInlayHints();
      }),
      resolver.onDidChange(() => this.scheduleRestart('the selected Python interpreter changed')),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.scheduleRestart('the workspace is now trusted')),
    );
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Starts (or restarts) the server; calls are serialized. */
  restart(reason = 'restart requested'): Promise<void> {
    const next = this.queue.then(() => this.doRestart(reason));
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    return this.restart('activation');
  }

  scheduleRestart(reason: string, delayMs = RESTART_DELAY_MS): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart(reason);
    }, delayMs);
  }

  /** Sends a custom request once the server runs. */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    await this.queue;
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new Error(
        this.lastCheck && !this.lastCheck.ok ? this.lastCheck.message : 'The Triton Lens server is not running.',
      );
    }
    // (no `undefined` token argument: vscode-jsonrpc would send [params, null] as positional params)
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  private async doRestart(reason: string): Promise<void> {
    if (this.disposed) return;
    await this.stopClient();
    if (!vscode.workspace.isTrusted) {
      this.log.info(
        'Restricted Mode: the server is not started, so no user code runs. Trust the workspace to start it.',
      );
      this.status.setGlobal({ kind: 'restricted' });
      return;
    }
    this.log.info(`Starting the server (${reason})`);
    this.status.setGlobal({ kind: 'starting' });
    const resource = vscode.window.activeTextEditor?.document.uri;
    const interpreter = await this.resolver.resolve(resource);
    this.interpreter = interpreter;
    this.log.info(`Python: ${interpreter.path} (from ${describeSource(interpreter.source)})`);
    const check = await (this.deps.check ?? checkInterpreter)(interpreter.path);
    this.lastCheck = check;
    if (this.disposed) return;
    if (!check.ok) {
      this.log.error(check.message);
      this.status.setGlobal({ kind: 'setup', message: check.message });
      void this.showSetupError(check, interpreter);
      return;
    }
    this.log.info(`Python ${check.probe.version.join('.')} at ${check.probe.executable} has triton, torch and numpy`);

    // cwd: `python -m` puts the cwd first on sys.path, so not the workspace (its own attr/, pygls … would shadow
    // the bundled ones); runs get their own cwd (the workspace folder or the file's folder) from the server.
    const spec = serverLaunch(
      interpreter.path,
      this.extensionPath,
      process.env,
      serverPaths(this.extensionPath).server,
    );
    const client = (this.deps.createClient ?? defaultClientFactory)(spec, this.clientOptions(), this.log);
    this.client = client;
    this.clientSubs = [
      client.onNotification(RUN_STARTED, (p: RunStartedParams) => {
        this.status.runStarted(p);
        this.runStarted.fire(p);
      }),
      client.onNotification(RUN_PARTIAL, (p: RunPartialParams) => this.status.runPartial(p)),
      client.onNotification(RUN_FINISHED, (p: RunFinishedParams) => {
        this.status.runFinished(p);
        this.runFinished.fire(p);
      }),
      client.onDidChangeState((e) => {
        // A deliberate stop clears this.client first, so this is a server that died on its own.
        if (e.newState === State.Stopped && this.client === client && !this.disposed) this.serverDied();
      }),
    ];
    try {
      await client.start();
    } catch (e) {
      const msg = `The Triton Lens server failed to start with ${interpreter.path}: ${e instanceof Error ? e.message : String(e)}`;
      this.log.error(msg);
      this.status.setGlobal({ kind: 'stopped', message: msg });
      void vscode.window.showErrorMessage(msg, 'Show Output').then((pick) => {
        if (pick) this.log.show();
      });
      return;
    }
    this.log.info('Server running');
    this.status.setGlobal({ kind: 'idle' });
    this.started.fire();
  }

  /** The server exited without being asked to: start it again, with a message, a few times a minute at most. */
  private serverDied(): void {
    const now = Date.now();
    this.autoRestarts = this.autoRestarts.filter((t) => now - t < AUTO_RESTART_WINDOW_MS);
    if (this.autoRestarts.length >= MAX_AUTO_RESTARTS) {
      const message =
        `The Triton Lens server stopped ${MAX_AUTO_RESTARTS + 1} times within a minute and is not restarted again. ` +
        'Run "Triton Lens: Restart Server" to start it; the log is in "Triton Lens: Show Output".';
      this.log.error(message);
      this.status.setGlobal({ kind: 'stopped', message });
      void vscode.window.showErrorMessage(message, 'Show Output').then((pick) => {
        if (pick) this.log.show();
      });
      return;
    }
    this.autoRestarts.push(now);
    const message =
      'The Triton Lens server stopped unexpectedly and is being restarted; the log is in "Triton Lens: Show Output".';
    this.log.warn(message);
    this.status.setGlobal({ kind: 'stopped', message });
    void vscode.window.showWarningMessage(message);
    this.scheduleRestart('the server stopped unexpectedly');
  }

  clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      initializationOptions: initializationOptions(vscode.workspace.isTrusted, this.withInterpreter(getSettings())),
      synchronize: { configurationSection: SECTION },
      connectionOptions: { maxRestartCount: 3 },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        // The manager restarts a server that died (serverDied) and tells the user itself: the client only logs.
        closed: () => ({ action: CloseAction.DoNotRestart, message: 'The Triton Lens server exited.', handled: true }),
      },
      middleware: {
        // The server reads tritonLens.python for its runs: give it the interpreter resolved here (Python
        // extension's choice, ${workspaceFolder} expanded), not the raw setting.
        workspace: {
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) return result;
            return result.map((item, i) =>
              params.items[i]?.section === SECTION && item && typeof item === 'object'
                ? this.withInterpreter(item as TritonLensSettings)
                : item,
            );
          },
        },
        // Hints off means off, whatever the server does with the setting.
        provideInlayHints: (document, range, token, next) =>
          getSettings(document.uri).inlayHints ? next(document, range, token) : [],
      },
    };
  }

  private withInterpreter<T extends { python?: string }>(settings: T): T {
    return this.interpreter ? { ...settings, python: this.interpreter.path } : settings;
  }

  private refreshInlayHints(): void {
    const feature = this.client?.getFeature(InlayHintRequest.method) as
      { getAllProviders?: () => Iterable<{ onDidChangeInlayHints: vscode.EventEmitter<void> }> } | undefined;
    for (const p of feature?.getAllProviders?.() ?? []) p.onDidChangeInlayHints.fire();
  }

  private async showSetupError(check: Exclude<CheckResult, { ok: true }>, interpreter: Interpreter): Promise<void> {
    const select = 'Select Interpreter';
    const settings = 'Open Settings';
    const copy = 'Copy Install Command';
    const actions: string[] = [];
    if (interpreter.source !== 'setting' && (await this.resolver.pythonApi())) actions.push(select);
    actions.push(settings);
    const installCmd = /`([^`]+)`/.exec(check.message)?.[1];
    if (installCmd) actions.push(copy);
    const pick = await vscode.window.showErrorMessage(check.message, ...actions);
    if (pick === select) await vscode.commands.executeCommand('python.setInterpreter');
    else if (pick === settings)
      await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.python`);
    else if (pick === copy && installCmd) await vscode.env.clipboard.writeText(installCmd);
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.clientSubs.splice(0)) d.dispose();
    if (!client) return;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (e) {
      this.log.warn(`Stopping the server: ${String(e)}`);
    }
    try {
      await client.dispose(2000);
    } catch {
      /* already gone */
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
    await this.stopClient();
  }
}

function describeSource(s: Interpreter['source']): string {
  return s === 'setting'
    ? 'the tritonLens.python setting'
    : s === 'python-extension'
      ? 'the Python extension'
      : 'python3 on PATH';
}
