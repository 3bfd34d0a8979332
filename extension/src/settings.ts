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
  runCommands: {},
  inlayHints: true,
  debounceMs: 400,
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

/** A glob as a RegExp: `**` any path part, `*` and `?` within one part, `{a,b}` alternatives. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else {
        re += '[^/]*';
      }
    } else if (ch === '?') {
      re += '[^/]';
    } else if (ch === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) {
        re += '\\{';
        continue;
      }
      const alts = glob.slice(i + 1, end).split(',').map((a) => globToRegExp(a).source.slice(1, -1));
      re += `(?:${alts.join('|')})`;
      i = end;
    } else {
      re += ch.replace(/[.+^$()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

/**
 * The run command configured for a file: the first glob (in settings order) that matches the file's path
 * relative to its workspace folder, its absolute path, or (for a glob without '/') its base name.
 */
export function runCommandFor(
  file: string,
  runCommands: Record<string, string | string[]>,
  workspaceFolder?: string,
): { glob: string; command: string | string[] } | undefined {
  const norm = (p: string) => p.split(path.sep).join('/');
  const abs = norm(file);
  const rel = workspaceFolder ? norm(path.relative(workspaceFolder, file)) : undefined;
  const base = path.basename(file);
  for (const [glob, command] of Object.entries(runCommands)) {
    if (Array.isArray(command) ? !command.length : typeof command !== 'string' || !command.trim()) continue;
    const re = globToRegExp(glob.replace(/^\.\//, ''));
    const hit = glob.includes('/')
      ? (rel !== undefined && !rel.startsWith('..') && re.test(rel)) || re.test(abs)
      : re.test(base) || (rel !== undefined && re.test(rel));
    if (hit) return { glob, command };
  }
  return undefined;
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
