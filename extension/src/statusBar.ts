// One status bar item: what the server is doing with the file in the active editor.
import * as vscode from 'vscode';

export type LensState =
  | { kind: 'starting' }
  | { kind: 'idle' }
  | { kind: 'running'; uri: string }
  | { kind: 'done'; uri: string; ms: number; launches: number; standIn?: CudaStandIn }
  | { kind: 'failed'; uri: string; status: string; ms: number; standIn?: CudaStandIn }
  | { kind: 'setup'; message: string }
  | { kind: 'restricted' }
  | { kind: 'stopped'; message: string };

export interface RunStartedParams {
  uri: string;
  version?: number;
}
/** The run's CUDA tensors were CPU tensors (no GPU here, or tritonLens.device "cpu"): nothing ran on a GPU. */
export interface CudaStandIn {
  gpu: string;
  reason: string;
}

export interface RunFinishedParams {
  uri: string;
  version?: number;
  status: string;
  ms: number;
  launches: number | unknown[];
  cudaStandIn?: CudaStandIn | null;
}

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

export function launchCount(launches: RunFinishedParams['launches']): number {
  return Array.isArray(launches) ? launches.length : Number(launches) || 0;
}

export function isSuccess(status: string): boolean {
  return status === 'ok' || status === 'done' || status === 'success';
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
        tooltip: 'Triton Lens: ready. Save or edit a file with a Triton kernel launch to trace it.',
        error: false,
      };
    case 'running':
      return {
        text: '$(sync~spin) Triton Lens: running',
        tooltip: `Triton Lens: running ${base(s.uri)} under the Triton interpreter`,
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
    case 'failed':
      return {
        text: `$(error) Triton Lens: ${s.status}`,
        tooltip: `Triton Lens: the run of ${base(s.uri)} ended with "${s.status}" after ${formatMs(s.ms)}.${standInTooltip(s.standIn)} Click for the log.`,
        error: true,
      };
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

/**
 * Keeps the last run state per document and shows the one of the active editor (or the latest, when the
 * active editor has none). Server-wide states (starting, setup, restricted, stopped) win over per-file ones.
 */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private global: LensState = { kind: 'starting' };
  private readonly perUri = new Map<string, LensState>();
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
    if (state.kind === 'starting' || state.kind === 'stopped' || state.kind === 'restricted') this.perUri.clear();
    this.update();
  }

  runStarted(p: RunStartedParams): void {
    this.perUri.set(p.uri, { kind: 'running', uri: p.uri });
    this.latest = p.uri;
    this.update();
  }

  runFinished(p: RunFinishedParams): void {
    const ms = Number(p.ms) || 0;
    const standIn = p.cudaStandIn ?? undefined;
    this.perUri.set(
      p.uri,
      isSuccess(p.status)
        ? { kind: 'done', uri: p.uri, ms, launches: launchCount(p.launches), standIn }
        : { kind: 'failed', uri: p.uri, status: String(p.status), ms, standIn },
    );
    this.latest = p.uri;
    this.update();
  }

  /** What is shown now (for tests and the e2e hook). */
  current(): LensState {
    if (this.global.kind !== 'idle') return this.global;
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    return (active && this.perUri.get(active)) || (this.latest && this.perUri.get(this.latest)) || this.global;
  }

  private update(): void {
    const r = render(this.current());
    this.item.text = r.text;
    this.item.tooltip = r.tooltip;
    this.item.backgroundColor = r.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
