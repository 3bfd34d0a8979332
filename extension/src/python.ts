// Which Python runs the server and the kernels, and whether it has what they need.
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import type { PythonExtension } from '@vscode/python-extension';
import { expandVariables, getSettings } from './settings';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
  /** Executable to spawn. */
  path: string;
  source: InterpreterSource;
}

/** The packages the user's environment must provide (the server's own pygls etc. ship in the .vsix). */
export const REQUIRED_MODULES = ['triton', 'torch', 'numpy'] as const;
export const MIN_PYTHON: [number, number] = [3, 10];

/** Finds modules without importing them (importing torch alone takes seconds). */
export const PROBE_SCRIPT = [
  'import importlib.util, json, sys',
  'mods = sys.argv[1:]',
  'def ok(m):',
  '    try:',
  '        return importlib.util.find_spec(m) is not None',
  '    except Exception:',
  '        return False',
  'print(json.dumps({"executable": sys.executable, "version": list(sys.version_info[:3]),',
  '                  "missing": [m for m in mods if not ok(m)]}))',
].join('\n');

export interface ProbeResult {
  executable: string;
  version: number[];
  missing: string[];
}

export type CheckResult =
  | { ok: true; probe: ProbeResult }
  | { ok: false; reason: 'not-found' | 'failed' | 'old-python' | 'missing'; message: string; probe?: ProbeResult };

export type Exec = (file: string, args: string[], timeoutMs: number) => Promise<{ stdout: string; stderr: string }>;

export const execFileAsync: Exec = (file, args, timeoutMs) =>
  new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout: String(stdout), stderr: String(stderr) }));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });

/** Quotes a path for a shell command the user may copy. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function missingMessage(python: string, missing: string[]): string {
  const names = missing.join(', ');
  return `Triton Lens needs ${names} in ${python}: run \`${shellQuote(python)} -m pip install ${missing.join(' ')}\``;
}

/** Runs the probe in `python` and says what, if anything, stops Triton Lens from using it. */
export async function checkInterpreter(
  python: string,
  modules: readonly string[] = REQUIRED_MODULES,
  exec: Exec = execFileAsync,
): Promise<CheckResult> {
  let probe: ProbeResult;
  try {
    const { stdout } = await exec(python, ['-c', PROBE_SCRIPT, ...modules], 30000);
    const line = stdout.trim().split('\n').pop() ?? '';
    probe = JSON.parse(line) as ProbeResult;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT' || err.code === 'EACCES') {
      return {
        ok: false,
        reason: 'not-found',
        message: `Triton Lens could not run the Python interpreter ${python} (${err.code === 'ENOENT' ? 'not found' : 'not executable'}). Select an interpreter that has triton, torch and numpy.`,
      };
    }
    const detail = (err.stderr || err.message || String(e)).trim().split('\n').slice(-3).join(' ');
    return { ok: false, reason: 'failed', message: `Triton Lens could not run ${python}: ${detail}` };
  }
  const [major, minor] = probe.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    return {
      ok: false,
      reason: 'old-python',
      probe,
      message: `Triton Lens needs Python ${MIN_PYTHON.join('.')} or newer; ${python} is ${probe.version.join('.')}. Select a newer interpreter.`,
    };
  }
  if (probe.missing.length) {
    return { ok: false, reason: 'missing', probe, message: missingMessage(python, probe.missing) };
  }
  return { ok: true, probe };
}

/**
 * Interpreter discovery: the `tritonLens.python` setting when it is set, else the interpreter selected in the
 * Python extension (when installed), else `python3` on PATH. `onDidChange` fires when the Python extension's
 * selection changes; setting changes are watched by the caller (they restart the server as well).
 */
export class InterpreterResolver implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private api: PythonExtension | undefined;
  private apiTried = false;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly loadApi: () => Promise<PythonExtension | undefined> = defaultLoadApi,
  ) {}

  /** The Python extension's API, or undefined when it is not installed or fails to activate. */
  async pythonApi(): Promise<PythonExtension | undefined> {
    if (this.apiTried) return this.api;
    this.apiTried = true;
    try {
      this.api = await this.loadApi();
    } catch (e) {
      this.log.warn(`Python extension API unavailable: ${e instanceof Error ? e.message : String(e)}`);
      this.api = undefined;
    }
    if (this.api) {
      this.disposables.push(
        this.api.environments.onDidChangeActiveEnvironmentPath(() => {
          this.log.info('The Python extension selected another interpreter');
          this.changed.fire();
        }),
      );
    }
    return this.api;
  }

  async resolve(resource?: vscode.Uri): Promise<Interpreter> {
    const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : vscode.workspace.workspaceFolders?.[0];
    const setting = getSettings(resource).python.trim();
    if (setting) {
      return { path: expandVariables(setting, { workspaceFolder: folder?.uri.fsPath }), source: 'setting' };
    }
    const api = await this.pythonApi();
    if (api) {
      try {
        const envPath = api.environments.getActiveEnvironmentPath(resource ?? folder?.uri);
        const env = await api.environments.resolveEnvironment(envPath);
        const exe = env?.executable.uri?.fsPath ?? envPath?.path;
        if (exe) return { path: exe, source: 'python-extension' };
      } catch (e) {
        this.log.warn(`Could not read the Python extension's interpreter: ${String(e)}`);
      }
    }
    return { path: 'python3', source: 'default' };
  }

  /** Path of the debugpy package bundled with the Python extension, if any. */
  async debuggerPackagePath(): Promise<string | undefined> {
    const api = await this.pythonApi();
    try {
      return (await api?.debug.getDebuggerPackagePath()) ?? undefined;
    } catch {
      return undefined;
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

async function defaultLoadApi(): Promise<PythonExtension | undefined> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return undefined;
  const { PythonExtension } = await import('@vscode/python-extension');
  return PythonExtension.api();
}
