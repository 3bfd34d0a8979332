// One status bar item: what the server is doing with the file in the active editor.
import * as vscode from 'vscode';
import type { CudaStandIn, RunFinishedParams, RunPartialParams, RunStartedParams } from './lspMessages';

export type LensState =
  | { kind: 'starting' }
  | { kind: 'idle'; uri?: string }
  | { kind: 'running'; uri: string }
  | { kind: 'partial'; uri: string; done: number; total: number; kernel: string }
  | { kind: 'done'; uri: string; ms: number; launches: number; standIn?: CudaStandIn }
  | { kind: 'failed'; uri: string; status: string; ms: number; standIn?: CudaStandIn }
  | { kind: 'setup'; message: string }
  | { kind: 'restricted' }
  | { kind: 'stopped'; message: string };

export type { CudaStandIn, RunFinishedParams, RunPartialParams, RunStartedParams } from './lspMessages';

export const STAND_IN = 'CPU stand-in for CUDA';

function standInTooltip(s: CudaStandIn | undefined): string {
  return s
    ? ` ${STAND_IN} (${s.reason}): its CUDA tensors were CPU tensors and its GPU a stood-in ${s.gpu}; nothing ran on a GPU.`
    : '';
}

export interface Rendered {
  text: string;
  tooltip: string;
  error: boolean;
}

const base = (uri: string) =>
  decodeURIComponent(
    uri
      .replace(/[?#].*$/, '')
      .split('/')
      .pop() ?? uri,
  );

export function isSuccess(status: RunFinishedParams['status']): boolean {
  return status === 'ok';
}

/**
 * What a run's status id (RunResult.status, or "cancelled") means, in words: the status bar's text, a
 * sentence for its tooltip (what happened and what to do), and whether it is an error of the script (red).
 * The ids are the server's (server/triton_lens/model/__init__.py); an unknown one is shown quoted.
 */
export function describeStatus(status: string): { short: string; sentence: string; error: boolean } {
  switch (status) {
    case 'exception':
      return {
        short: 'script raised an exception',
        sentence: 'stopped at an exception the script raised; the error diagnostic is at the line it happened.',
        error: true,
      };
    case 'timeout':
      return {
        short: 'hit the time limit',
        sentence:
          'was stopped at the time limit; the hints show what ran until then. Make the launch smaller or raise tritonLens.timeLimit.',
        error: true,
      };
    case 'crashed':
      return {
        short: 'script crashed',
        sentence:
          'ended with its process gone (a crash, or past tritonLens.memoryLimitMb); the diagnostic and the log say which.',
        error: true,
      };
    case 'no-launch':
      return {
        short: 'no kernel launch',
        sentence:
          'ran but launched no Triton kernel (a file that only defines kernels). Add a `# triton-lens: run <script or test>` comment naming what launches it.',
        error: false,
      };
    case 'error':
      return {
        short: 'could not run the file',
        sentence: 'could not be run by Triton Lens itself (not an error of the script); the log has the details.',
        error: true,
      };
    case 'cancelled':
      return {
        short: 'run stopped',
        sentence: 'was stopped before it finished (the file changed, closed, or a setting changed).',
        error: false,
      };
    default:
      return { short: `run ended "${status}"`, sentence: `ended with status "${status}".`, error: true };
  }
}

export function formatMs(ms: number): string {
  return ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function render(s: LensState): Rendered {
  switch (s.kind) {
    case 'starting':
      return { text: '$(loading~spin) Triton Lens', tooltip: 'Triton Lens: starting the server', error: false };
    case 'idle':
      return {
        text: '$(pulse) Triton Lens',
        tooltip: s.uri
          ? `Triton Lens: no run of ${base(s.uri)}. A file runs when it launches a Triton kernel, or has a \`# triton-lens: run\` comment.`
          : 'Triton Lens: ready. Save or edit a file with a Triton kernel launch to trace it.',
        error: false,
      };
    case 'running':
      return {
        text: '$(sync~spin) Triton Lens: running',
        tooltip: `Triton Lens: running ${base(s.uri)} under the Triton interpreter`,
        error: false,
      };
    case 'partial':
      return {
        text: `$(sync~spin) Triton Lens: ${s.done} of ${s.total} programs`,
        tooltip: `Triton Lens: the hints and diagnostics of ${base(s.uri)} are partial: ${s.done} of the ${s.total} programs of ${s.kernel}'s launch so far (their findings are exact; races, unwritten outputs and dead masks wait for the rest). The complete run replaces them.`,
        error: false,
      };
    case 'done': {
      const n = s.launches === 1 ? '1 launch' : `${s.launches} launches`;
      return {
        text: `$(check) Triton Lens: done in ${formatMs(s.ms)}${s.standIn ? ` · ${STAND_IN}` : ''}`,
        tooltip: `Triton Lens: traced ${base(s.uri)}: ${n} in ${formatMs(s.ms)}.${standInTooltip(s.standIn)} Click for the log.`,
        error: false,
      };
    }
    case 'failed': {
      const d = describeStatus(s.status);
      return {
        text: `${d.error ? '$(error)' : '$(info)'} Triton Lens: ${d.short}`,
        tooltip: `Triton Lens: the run of ${base(s.uri)} ${d.sentence} (after ${formatMs(s.ms)}).${standInTooltip(s.standIn)} Click for the log.`,
        error: d.error,
      };
    }
    case 'setup':
      return { text: '$(warning) Triton Lens: setup needed', tooltip: s.message, error: true };
    case 'restricted':
      return {
        text: '$(shield) Triton Lens: restricted',
        tooltip:
          'Triton Lens runs the files you edit, so it runs nothing in Restricted Mode. Trust this workspace to trace kernels.',
        error: false,
      };
    case 'stopped':
      return { text: '$(debug-stop) Triton Lens: stopped', tooltip: s.message, error: true };
  }
}

/** Documents whose state the bar shows when their editor is active: the files the server runs. */
function isRunnable(doc: vscode.TextDocument | undefined): boolean {
  return !!doc && doc.languageId === 'python' && ['file', 'untitled', 'vscode-notebook-cell'].includes(doc.uri.scheme);
}

/** The same text with the file named, for a state shown while another editor (or none) is active. */
function named(r: Rendered, uri: string): Rendered {
  return { ...r, text: `${r.text} · ${base(uri)}` };
}

/**
 * Keeps the last run state per document and shows the one of the active editor: a Python file with no run
 * shows "no run of this file", not another file's run. With no editor active (the access map focused) or a
 * non-Python one, it shows the latest run, naming its file. Server-wide states (starting, setup, restricted,
 * stopped) win over per-file ones.
 */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private global: LensState = { kind: 'starting' };
  private readonly perUri = new Map<string, LensState>();
  /** The version of the latest run started per document: the end of an older run (cancelled too late, its
   * result still sent) must not say "done" while the newer one runs. */
  private readonly startedVersion = new Map<string, number>();
  private latest: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(showOutputCommand: string) {
    this.item = vscode.window.createStatusBarItem('tritonLens.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Triton Lens';
    this.item.command = showOutputCommand;
    this.disposables.push(
      this.item,
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
    );
    this.update();
  }

  setGlobal(state: LensState): void {
    this.global = state;
    if (state.kind === 'starting' || state.kind === 'stopped' || state.kind === 'restricted') {
      this.perUri.clear();
      this.startedVersion.clear();
    }
    this.update();
  }

  runStarted(p: RunStartedParams): void {
    this.startedVersion.set(p.uri, p.version);
    this.perUri.set(p.uri, { kind: 'running', uri: p.uri });
    this.latest = p.uri;
    this.update();
  }

  runPartial(p: RunPartialParams): void {
    const newer = this.startedVersion.get(p.uri);
    if (newer !== undefined && p.version < newer) return;
    this.perUri.set(p.uri, {
      kind: 'partial',
      uri: p.uri,
      done: p.programsDone,
      total: p.programsTotal,
      kernel: p.kernel,
    });
    this.latest = p.uri;
    this.update();
  }

  runFinished(p: RunFinishedParams): void {
    const newer = this.startedVersion.get(p.uri);
    // A newer run is on (an edit, or a setting that re-ran the same version): "done" would be another run's.
    if (p.running || (newer !== undefined && p.version < newer)) return;
    const ms = p.ms;
    const standIn = p.cudaStandIn ?? undefined;
    this.perUri.set(
      p.uri,
      isSuccess(p.status)
        ? { kind: 'done', uri: p.uri, ms, launches: p.launches, standIn }
        : { kind: 'failed', uri: p.uri, status: p.status, ms, standIn },
    );
    this.latest = p.uri;
    this.update();
  }

  /** What is shown now (for tests and the e2e hook). */
  current(): LensState {
    return this.shown().state;
  }

  private shown(): { state: LensState; other: boolean } {
    if (this.global.kind !== 'idle') return { state: this.global, other: false };
    const doc = vscode.window.activeTextEditor?.document;
    if (isRunnable(doc)) {
      const uri = doc!.uri.toString();
      return { state: this.perUri.get(uri) ?? { kind: 'idle', uri }, other: false };
    }
    const latest = this.latest && this.perUri.get(this.latest);
    return latest ? { state: latest, other: true } : { state: this.global, other: false };
  }

  private update(): void {
    const { state, other } = this.shown();
    const r = other && 'uri' in state && state.uri ? named(render(state), state.uri) : render(state);
    this.item.text = r.text;
    this.item.tooltip = r.tooltip;
    this.item.backgroundColor = r.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
