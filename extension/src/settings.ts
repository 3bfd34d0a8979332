// The `tritonLens.*` settings: reading them, and the pieces of them the extension itself uses.
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

export const SECTION = 'tritonLens';

export interface TritonLensSettings {
  /** Interpreter override; '' means "ask the Python extension, else python3". */
  python: string;
  /** Seconds one traced run may take. */
  timeLimit: number;
  memoryLimitMb: number;
  /** Processes a launch's programs are split over; 0: the machine's cores (at most 16) less one. */
  workers: number;
  /** A long launch's sample of programs first, shown as partial results until the complete run. */
  progressive: boolean;
  /** glob -> command line (or argv), e.g. {"kernels/**": "pytest tests -x"} */
  runCommands: Record<string, string | string[]>;
  inlayHints: boolean;
  debounceMs: number;
  /** 'auto': CPU tensors stand in for CUDA ones where there is no GPU; 'cpu': always. */
  device: 'auto' | 'cpu';
  /** The GPU the CPU stand-in reports to scripts. */
  standInGpu: string;
}

export const DEFAULTS: TritonLensSettings = {
  python: '',
  timeLimit: 30,
  memoryLimitMb: 8192,
  workers: 0,
  progressive: true,
  runCommands: {},
  inlayHints: true,
  debounceMs: 100,
  device: 'auto',
  standInGpu: 'H100',
};

export function getSettings(scope?: vscode.ConfigurationScope): TritonLensSettings {
  const c = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    python: c.get<string>('python', DEFAULTS.python) ?? '',
    timeLimit: c.get<number>('timeLimit', DEFAULTS.timeLimit),
    memoryLimitMb: c.get<number>('memoryLimitMb', DEFAULTS.memoryLimitMb),
    workers: c.get<number>('workers', DEFAULTS.workers),
    progressive: c.get<boolean>('progressive', DEFAULTS.progressive),
    runCommands: { ...(c.get<Record<string, string | string[]>>('runCommands', DEFAULTS.runCommands) ?? {}) },
    inlayHints: c.get<boolean>('inlayHints', DEFAULTS.inlayHints),
    debounceMs: c.get<number>('debounceMs', DEFAULTS.debounceMs),
    device: c.get<string>('device', DEFAULTS.device) === 'cpu' ? 'cpu' : 'auto',
    standInGpu: c.get<string>('standInGpu', DEFAULTS.standInGpu) || DEFAULTS.standInGpu,
  };
}

/** Settings whose change needs a new server process (the interpreter it runs on). */
export function needsRestart(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${SECTION}.python`);
}

export interface VariableContext {
  workspaceFolder?: string;
  file?: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
}

/** Expands ${workspaceFolder}, ${file}, ${fileDirname}, ${userHome}, ${env:NAME} and a leading ~. */
export function expandVariables(value: string, ctx: VariableContext): string {
  const home = ctx.home ?? os.homedir();
  const env = ctx.env ?? process.env;
  let out = value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name === 'workspaceFolder' && ctx.workspaceFolder) return ctx.workspaceFolder;
    if (name === 'file' && ctx.file) return ctx.file;
    if (name === 'fileDirname' && ctx.file) return path.dirname(ctx.file);
    if (name === 'userHome') return home;
    if (name.startsWith('env:')) return env[name.slice(4)] ?? '';
    return whole;
  });
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return out;
}

/** Splits a command line like a POSIX shell would for simple cases: quotes and backslash escapes. */
export function splitCommandLine(cmd: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < cmd.length; i++) {
    const ch = cmd[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < cmd.length && '"\\$`'.includes(cmd[i + 1])) cur += cmd[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < cmd.length) {
      cur += cmd[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
