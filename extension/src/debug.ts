// "Debug this kernel": runs what the server runs for the file (its run plan: the `# triton-lens: run` comment, the
// tritonLens.runCommands entry, else the file; asked with the tritonLens/runPlan request, owned by the engine's
// source/plan.py) under debugpy with TRITON_INTERPRET=1, so breakpoints inside @triton.jit bodies stop. Contributes the "triton-lens" debug type, whose adapter is
// `python -m debugpy.adapter` of the selected interpreter (or the debugpy that the Python extension ships), so it
// works with and without the Python extension. An optional program id narrows where kernel breakpoints stop
// (TRITON_LENS_STOP_PROGRAM, honoured by server/triton_lens/debug_launcher.py).
import * as path from 'path';
import * as vscode from 'vscode';
import { kernelOutline, type KernelOutline, type OutlineServer } from './kernelOutline';
import { LSP_REQUESTS, type RunPlan } from './lspMessages';
import { checkInterpreter, shellQuote, type InterpreterResolver } from './python';
import { splitCommandLine } from './settings';

export const DEBUG_TYPE = 'triton-lens';

export interface TritonLensLaunch extends vscode.DebugConfiguration {
  program?: string;
  module?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  stopProgram?: string | number | number[];
  python?: string | string[];
  justMyCode?: boolean;
  console?: string;
}

/** "3" / "3,1" / [3,1] / 3 -> "3,1,0"; "" / undefined -> undefined; anything else throws. */
export function normalizeStopProgram(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  let parts: string[];
  if (typeof v === 'number') parts = [String(v)];
  else if (Array.isArray(v)) parts = v.map((x) => String(x));
  else if (typeof v === 'string') {
    const s = v.trim().replace(/^\(|\)$/g, '');
    if (!s) return undefined;
    parts = s.split(/[\s,]+/).filter(Boolean);
  } else throw new Error(`stopProgram must be "x", "x,y" or "x,y,z", not ${JSON.stringify(v)}`);
  if (parts.length < 1 || parts.length > 3 || !parts.every((p) => /^\d+$/.test(p))) {
    throw new Error(
      `stopProgram must be up to three non-negative integers like "2" or "2,0,1", not ${JSON.stringify(v)}`,
    );
  }
  while (parts.length < 3) parts.push('0');
  return parts.map((p) => String(Number(p))).join(',');
}

/** Input box validation: undefined when fine. */
export function validateStopProgram(v: string): string | undefined {
  try {
    normalizeStopProgram(v);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The server's answer to tritonLens/runPlan (server/triton_lens/lsp/plan_request.py; its type is the schema's). */
export type { RunPlan } from './lspMessages';

export const RUN_PLAN = LSP_REQUESTS.runPlan;

/** Asks the server for a file's run plan (the editor's text, so an unsaved run comment counts). */
export type RunPlanner = (uri: vscode.Uri, text: string) => Promise<RunPlan>;

/** What to run for a command line like "pytest tests/t.py -k add", "python -m mod", "python run.py --n 4". */
export function targetFromCommand(command: string | string[]): { program?: string; module?: string; args: string[] } {
  const t = Array.isArray(command) ? command.map(String) : splitCommandLine(command);
  if (!t.length) throw new Error('empty run command');
  const head = path.basename(t[0]);
  if (/^python(\d+(\.\d+)?)?(\.exe)?$/.test(head)) {
    let i = 1;
    while (i < t.length && t[i].startsWith('-') && t[i] !== '-m' && t[i] !== '-c') i++;
    if (t[i] === '-m' && t[i + 1]) return { module: t[i + 1], args: t.slice(i + 2) };
    if (t[i] === '-c') throw new Error(`"python -c" run commands cannot be debugged: ${command}`);
    if (!t[i]) throw new Error(`no script in the run command: ${command}`);
    return { program: t[i], args: t.slice(i + 1) };
  }
  if (head.endsWith('.py')) return { program: t[0], args: t.slice(1) };
  // "pytest ..." and other console scripts of a Python package: run their module
  return { module: head.replace(/\.exe$/, ''), args: t.slice(1) };
}

/**
 * The debug configuration for "Debug this kernel" of `file`: exactly what the server runs for it (its run plan),
 * in the folder the server runs it in.
 */
export function kernelDebugConfig(
  file: string,
  kernelName: string | undefined,
  plan: Pick<RunPlan, 'command' | 'cwd'>,
  opts: { stopProgram?: string } = {},
): TritonLensLaunch {
  const cfg: TritonLensLaunch = {
    type: DEBUG_TYPE,
    request: 'launch',
    name: kernelName ? `Debug Triton kernel ${kernelName}` : `Debug ${path.basename(file)}`,
    cwd: plan.cwd ?? path.dirname(file),
    args: [],
    justMyCode: true,
  };
  if (plan.command?.length) Object.assign(cfg, targetFromCommand(plan.command));
  else cfg.program = file;
  if (opts.stopProgram) cfg.stopProgram = opts.stopProgram;
  return cfg;
}

/** Turns our launch configuration into the one debugpy reads: the launcher runs the target with the env set. */
export function toDebugpyConfig(
  cfg: TritonLensLaunch,
  python: string,
  launcherPath: string,
): vscode.DebugConfiguration {
  const stop = normalizeStopProgram(cfg.stopProgram);
  const env: Record<string, string> = { ...(cfg.env ?? {}), TRITON_INTERPRET: '1' };
  if (stop) env.TRITON_LENS_STOP_PROGRAM = stop;
  const target = cfg.module ? ['-m', cfg.module] : cfg.program ? [cfg.program] : [];
  if (!target.length) throw new Error('Nothing to debug: set "program" or "module".');
  const { program: _p, module: _m, stopProgram: _s, args, python: _py, ...rest } = cfg;
  return {
    ...rest,
    type: DEBUG_TYPE,
    request: 'launch',
    program: launcherPath,
    args: [...target, ...(args ?? [])],
    env,
    python: [python],
    justMyCode: cfg.justMyCode ?? true,
    // the launcher is plumbing: keep its frames out of stepping and the user's call stack
    rules: [...((rest.rules as unknown[]) ?? []), { path: launcherPath, include: false }],
    console: cfg.console ?? 'internalConsole',
    tritonLens: { program: cfg.program, module: cfg.module, stopProgram: stop ?? null },
  };
}

export class KernelDebugger
  implements vscode.DebugConfigurationProvider, vscode.DebugAdapterDescriptorFactory, vscode.Disposable
{
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionPath: string,
    private readonly resolver: InterpreterResolver,
    private readonly log: vscode.LogOutputChannel,
    private readonly server: OutlineServer,
    private readonly runPlan: RunPlanner,
  ) {
    this.disposables.push(
      vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, this),
      vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, this),
    );
  }

  get launcherPath(): string {
    return path.join(this.extensionPath, 'server', 'triton_lens', 'debug_launcher.py');
  }

  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [
      {
        type: DEBUG_TYPE,
        request: 'launch',
        name: 'Debug Triton kernel (current file)',
        program: '${file}',
        stopProgram: '',
      },
    ];
  }

  /** F5 without a launch.json: debug the active file. */
  resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    cfg: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    if (!cfg.type && !cfg.request && !cfg.name) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || doc.languageId !== 'python') return undefined;
      return {
        type: DEBUG_TYPE,
        request: 'launch',
        name: `Debug ${path.basename(doc.uri.fsPath)}`,
        program: doc.uri.fsPath,
      };
    }
    return cfg;
  }

  async resolveDebugConfigurationWithSubstitutedVariables(
    folder: vscode.WorkspaceFolder | undefined,
    cfg: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    if (cfg.tritonLens) return cfg; // already ours (a restart)
    const c = cfg as TritonLensLaunch;
    if (!c.program && !c.module) {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc?.languageId === 'python') c.program = doc.uri.fsPath;
    }
    const resource = c.program ? vscode.Uri.file(c.program) : folder?.uri;
    const python = Array.isArray(c.python) ? c.python[0] : c.python || (await this.resolver.resolve(resource)).path;
    c.cwd ??= folder?.uri.fsPath ?? (c.program ? path.dirname(c.program) : undefined);
    try {
      const out = toDebugpyConfig(c, python, this.launcherPath);
      this.log.info(
        `Debugging ${c.module ? `-m ${c.module}` : c.program} with ${python}${out.env.TRITON_LENS_STOP_PROGRAM ? ` (stopping only in program ${out.env.TRITON_LENS_STOP_PROGRAM})` : ''}`,
      );
      return out;
    } catch (e) {
      void vscode.window.showErrorMessage(`Triton Lens: ${(e as Error).message}`);
      return undefined;
    }
  }

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor | undefined> {
    const py = session.configuration.python;
    const python: string = (Array.isArray(py) ? py[0] : py) || (await this.resolver.resolve()).path;
    const check = await checkInterpreter(python, ['debugpy']);
    if (check.ok) {
      this.log.info(`Debug adapter: ${python} -m debugpy.adapter`);
      return new vscode.DebugAdapterExecutable(python, ['-m', 'debugpy.adapter']);
    }
    const bundled = await this.resolver.debuggerPackagePath();
    if (bundled) {
      this.log.info(`Debug adapter: the Python extension's debugpy at ${bundled}`);
      return new vscode.DebugAdapterExecutable(python, [path.join(bundled, 'adapter')]);
    }
    const msg =
      check.ok === false && check.reason === 'missing'
        ? `Triton Lens needs debugpy in ${python} to debug kernels: run \`${shellQuote(python)} -m pip install debugpy\``
        : check.message;
    this.log.error(msg);
    throw new Error(msg);
  }

  /** The "Debug this kernel" code lens / command. */
  async debugKernel(uri: vscode.Uri, kernelName?: string, askStopProgram = true): Promise<boolean> {
    if (isNotebookUri(uri)) {
      void vscode.window.showErrorMessage(NOTEBOOK_DEBUG_MESSAGE);
      return false;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const kernel = kernelName ? await this.findKernel(doc, kernelName) : undefined;
    let stopProgram: string | undefined;
    if (askStopProgram) {
      const answer = await vscode.window.showInputBox({
        title: `Debug ${kernelName ?? path.basename(uri.fsPath)}`,
        prompt:
          'Stop at breakpoints inside the kernel only in this program (tl.program_id x, y, z). Empty: every program.',
        placeHolder: 'e.g. 0 or 3,1',
        validateInput: validateStopProgram,
        ignoreFocusOut: true,
      });
      if (answer === undefined) return false; // cancelled
      stopProgram = normalizeStopProgram(answer);
    }
    if (kernel) this.ensureBreakpointIn(uri, kernel);
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    let cfg: TritonLensLaunch;
    try {
      const plan = await this.runPlan(uri, doc.getText());
      this.log.info(
        `Debug ${path.basename(uri.fsPath)}: ${plan.command ? plan.command.join(' ') : 'the file'} (from the ${plan.origin === 'comment' ? `run comment on line ${plan.originLine}` : plan.origin === 'setting' ? 'tritonLens.runCommands setting' : 'file itself'})`,
      );
      cfg = kernelDebugConfig(uri.fsPath, kernelName, plan, { stopProgram });
    } catch (e) {
      void vscode.window.showErrorMessage(`Triton Lens: ${(e as Error).message}`);
      return false;
    }
    return vscode.debug.startDebugging(folder, cfg);
  }

  private async findKernel(doc: vscode.TextDocument, name: string): Promise<KernelOutline | undefined> {
    try {
      return (await kernelOutline(this.server, doc)).kernels.find((k) => k.name === name);
    } catch (e) {
      // Debugging still works without the server: only the automatic breakpoint is skipped.
      this.log.warn(`No kernel outline for ${doc.uri.fsPath}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  /** Without a breakpoint in the kernel, "Debug this kernel" would just run: put one on its first statement. */
  private ensureBreakpointIn(uri: vscode.Uri, k: KernelOutline): void {
    const has = vscode.debug.breakpoints.some(
      (b) =>
        b instanceof vscode.SourceBreakpoint &&
        b.enabled &&
        b.location.uri.toString() === uri.toString() &&
        b.location.range.start.line >= k.line &&
        b.location.range.start.line <= k.endLine,
    );
    if (has) return;
    const pos = new vscode.Position(k.bodyLine, 0);
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(uri, pos), true)]);
    this.log.info(`Added a breakpoint at line ${k.bodyLine + 1}, the first statement of ${k.name}`);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** What "Debug this kernel" says in a notebook: the debugger runs a .py file and sets breakpoints by path. */
export const NOTEBOOK_DEBUG_MESSAGE =
  'Triton Lens: debugging a kernel under the interpreter runs a .py file, and a notebook cell is not one. ' +
  'Export the notebook as a Python script (command "Jupyter: Export to Python Script") or move the kernel ' +
  'and its launch into a .py file, then use "Debug this kernel" there.';

/** A notebook or one of its cells (the lens of a cell passes the notebook's URI). */
export function isNotebookUri(uri: vscode.Uri): boolean {
  return uri.scheme === 'vscode-notebook-cell' || uri.scheme === 'vscode-notebook' || uri.path.endsWith('.ipynb');
}
