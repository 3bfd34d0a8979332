import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DebugAdapterExecutable,
  debug,
  makeDocument,
  makeEditor,
  makeLog,
  mock,
  SourceBreakpoint,
  Uri,
  window,
} from 'vscode';
import {
  DEBUG_TYPE,
  isNotebookUri,
  kernelDebugConfig,
  KernelDebugger,
  NOTEBOOK_DEBUG_MESSAGE,
  normalizeStopProgram,
  targetFromCommand,
  toDebugpyConfig,
  validateStopProgram,
  type RunPlan,
} from '../src/debug';

const REPO = path.resolve(__dirname, '../..');
const VENV_PY = path.join(REPO, '.venv/bin/python');

beforeEach(() => {
  mock.reset();
  vi.clearAllMocks();
});

describe('stop program', () => {
  it('normalizes to x,y,z', () => {
    expect(normalizeStopProgram('')).toBeUndefined();
    expect(normalizeStopProgram(undefined)).toBeUndefined();
    expect(normalizeStopProgram('3')).toBe('3,0,0');
    expect(normalizeStopProgram(' 3, 1 ')).toBe('3,1,0');
    expect(normalizeStopProgram('(1,2,3)')).toBe('1,2,3');
    expect(normalizeStopProgram([4, 5])).toBe('4,5,0');
    expect(normalizeStopProgram(7)).toBe('7,0,0');
  });
  it('rejects what is not a program id', () => {
    expect(validateStopProgram('1,2,3,4')).toMatch(/up to three/);
    expect(validateStopProgram('-1')).toMatch(/non-negative/);
    expect(validateStopProgram('x')).toBeDefined();
    expect(validateStopProgram('0')).toBeUndefined();
  });
});

describe('targetFromCommand', () => {
  it('understands python scripts, python -m, and console scripts', () => {
    expect(targetFromCommand('python -u bench.py --n 4')).toEqual({ program: 'bench.py', args: ['--n', '4'] });
    expect(targetFromCommand('python3.11 -m pytest -x t.py')).toEqual({ module: 'pytest', args: ['-x', 't.py'] });
    expect(targetFromCommand('pytest tests/test_k.py -k "add and small"')).toEqual({
      module: 'pytest',
      args: ['tests/test_k.py', '-k', 'add and small'],
    });
    expect(targetFromCommand('/venv/bin/pytest')).toEqual({ module: 'pytest', args: [] });
    expect(targetFromCommand('run.py a')).toEqual({ program: 'run.py', args: ['a'] });
    expect(() => targetFromCommand('python -c "print(1)"')).toThrow(/cannot be debugged/);
  });
});

describe('kernelDebugConfig / toDebugpyConfig', () => {
  it('debugs the file itself when the server runs the file, through the launcher, with TRITON_INTERPRET=1', () => {
    const cfg = kernelDebugConfig('/ws/k.py', 'add_kernel', { command: null, cwd: null }, { stopProgram: '2,0,0' });
    expect(cfg).toMatchObject({
      type: DEBUG_TYPE,
      request: 'launch',
      name: 'Debug Triton kernel add_kernel',
      program: '/ws/k.py',
      cwd: '/ws',
      stopProgram: '2,0,0',
    });
    const d = toDebugpyConfig({ ...cfg, env: { A: 'b' } }, '/py', '/ext/server/triton_lens/debug_launcher.py');
    expect(d).toMatchObject({
      type: DEBUG_TYPE,
      request: 'launch',
      program: '/ext/server/triton_lens/debug_launcher.py',
      args: ['/ws/k.py'],
      env: { A: 'b', TRITON_INTERPRET: '1', TRITON_LENS_STOP_PROGRAM: '2,0,0' },
      python: ['/py'],
      justMyCode: true,
      console: 'internalConsole',
      cwd: '/ws',
    });
    expect(d.stopProgram).toBeUndefined();
  });
  it("runs the server's command for the file (a console script as its module), in the server's folder", () => {
    const cfg = kernelDebugConfig('/ws/kernels/k.py', 'k', {
      command: ['pytest', '/ws/kernels/k.py', '-x'],
      cwd: '/ws',
    });
    expect(cfg).toMatchObject({ module: 'pytest', args: ['/ws/kernels/k.py', '-x'], cwd: '/ws' });
    expect(cfg.program).toBeUndefined();
    const d = toDebugpyConfig(cfg, '/py', '/L');
    expect(d.args).toEqual(['-m', 'pytest', '/ws/kernels/k.py', '-x']);
    expect(d.env).toEqual({ TRITON_INTERPRET: '1' });
    const py = kernelDebugConfig('/ws/k.py', 'k', {
      command: ['python', '-m', 'pytest', 'tests/t.py', '-k', 'a b'],
      cwd: '/ws',
    });
    expect(py).toMatchObject({ module: 'pytest', args: ['tests/t.py', '-k', 'a b'] });
    const script = kernelDebugConfig('/ws/k.py', 'k', { command: ['python', 'bench.py', '/ws/k.py'], cwd: '/ws' });
    expect(script).toMatchObject({ program: 'bench.py', args: ['/ws/k.py'] });
  });

  it('refuses a configuration with nothing to run', () => {
    expect(() => toDebugpyConfig({ type: DEBUG_TYPE, request: 'launch', name: 'x' }, '/py', '/L')).toThrow(/program/);
  });
});

// The server's kernel finder's answer for KERNEL below (0-based lines; tested on the Python side).
const OUTLINE = {
  kernels: [{ name: 'add_kernel', line: 2, col: 4, firstLine: 1, endLine: 4, bodyLine: 3, exact: true, params: [] }],
  at: null,
};

function makeDebugger(
  opts: { python?: string; bundled?: string; plan?: RunPlan; server?: { request: () => Promise<unknown> } } = {},
) {
  const resolver = {
    resolve: vi.fn(async () => ({ path: opts.python ?? VENV_PY, source: 'setting' })),
    debuggerPackagePath: vi.fn(async () => opts.bundled),
  };
  const server = opts.server ?? { request: vi.fn(async () => OUTLINE) };
  const runPlan = vi.fn(
    async (uri: { fsPath: string }, _text: string) =>
      opts.plan ?? {
        file: uri.fsPath,
        runnable: true,
        whyNot: '',
        origin: 'file' as const,
        originLine: 0,
        command: null,
        cwd: null,
      },
  );
  const d = new KernelDebugger('/ext', resolver as never, makeLog() as never, server as never, runPlan as never);
  return Object.assign(d, { runPlanMock: runPlan });
}

describe('KernelDebugger', () => {
  const KERNEL = [
    'import triton',
    '@triton.jit',
    'def add_kernel(x_ptr, n, BLOCK: tl.constexpr):',
    '    pid = tl.program_id(0)',
    '    x = tl.load(x_ptr + pid)',
    '',
    'if __name__ == "__main__":',
    '    add_kernel[(4,)](x, 4, BLOCK=4)',
  ].join('\n');

  it('registers the triton-lens debug type provider and adapter factory', () => {
    const d = makeDebugger();
    expect(debug.registerDebugConfigurationProvider).toHaveBeenCalledWith(DEBUG_TYPE, d);
    expect(debug.registerDebugAdapterDescriptorFactory).toHaveBeenCalledWith(DEBUG_TYPE, d);
  });

  it('"Debug this kernel": asks for a program, adds a breakpoint in the kernel, starts debugging', async () => {
    mock.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
    const doc = makeDocument('/ws/k.py', KERNEL);
    window.showInputBox.mockResolvedValueOnce('3');
    expect(await makeDebugger().debugKernel(doc.uri as never, 'add_kernel')).toBe(true);
    expect(mock.breakpoints).toHaveLength(1);
    const bp = mock.breakpoints[0] as SourceBreakpoint;
    expect(bp.location.uri.fsPath).toBe('/ws/k.py');
    expect(bp.location.range.start.line).toBe(3); // `pid = tl.program_id(0)`
    const [folder, cfg] = debug.startDebugging.mock.calls[0] as [{ name: string }, Record<string, unknown>];
    expect(folder.name).toBe('ws');
    expect(cfg).toMatchObject({ type: DEBUG_TYPE, program: '/ws/k.py', stopProgram: '3,0,0' });
  });

  it('keeps the user breakpoints when there is one in the kernel, and stops everywhere for an empty answer', async () => {
    const doc = makeDocument('/ws/k.py', KERNEL);
    const { Location, Position } = await import('vscode');
    mock.breakpoints.push(new SourceBreakpoint(new Location(doc.uri, new Position(4, 0))));
    window.showInputBox.mockResolvedValueOnce('');
    await makeDebugger().debugKernel(doc.uri as never, 'add_kernel');
    expect(mock.breakpoints).toHaveLength(1);
    const cfg = debug.startDebugging.mock.calls[0][1] as Record<string, unknown>;
    expect(cfg.stopProgram).toBeUndefined();
  });

  it('still debugs, without the automatic breakpoint, when the server cannot outline the file', async () => {
    const doc = makeDocument('/ws/k.py', KERNEL);
    window.showInputBox.mockResolvedValueOnce('');
    const server = { request: vi.fn(async () => Promise.reject(new Error('not running'))) };
    expect(await makeDebugger({ server }).debugKernel(doc.uri as never, 'add_kernel')).toBe(true);
    expect(mock.breakpoints).toHaveLength(0);
    expect(debug.startDebugging).toHaveBeenCalled();
  });

  it("asks the server for the file's run plan with the editor's text, and debugs its command", async () => {
    mock.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
    const text = KERNEL + '\n# triton-lens: run pytest tests/test_k.py -k small\n';
    const doc = makeDocument('/ws/k.py', text);
    window.showInputBox.mockResolvedValueOnce('');
    const d = makeDebugger({
      plan: {
        file: '/ws/k.py',
        runnable: true,
        whyNot: '',
        origin: 'comment',
        originLine: 11,
        command: ['pytest', 'tests/test_k.py', '-k', 'small'],
        cwd: '/ws',
      },
    });
    expect(await d.debugKernel(doc.uri as never, 'add_kernel')).toBe(true);
    expect(d.runPlanMock).toHaveBeenCalledWith(doc.uri, text);
    const cfg = debug.startDebugging.mock.calls[0][1] as Record<string, unknown>;
    expect(cfg).toMatchObject({ module: 'pytest', args: ['tests/test_k.py', '-k', 'small'], cwd: '/ws' });
  });

  it('says how to debug a notebook kernel instead of running the .ipynb as Python', async () => {
    const nb = Uri.file('/ws/puzzles.ipynb');
    expect(await makeDebugger().debugKernel(nb as never, 'add_kernel')).toBe(false);
    expect(window.showErrorMessage).toHaveBeenCalledWith(NOTEBOOK_DEBUG_MESSAGE);
    expect(NOTEBOOK_DEBUG_MESSAGE).toMatch(/Export to Python Script/);
    expect(window.showInputBox).not.toHaveBeenCalled();
    expect(debug.startDebugging).not.toHaveBeenCalled();
    expect(isNotebookUri(Uri.file('/ws/k.py') as never)).toBe(false);
  });

  it('shows the error and starts nothing when the server cannot answer', async () => {
    const doc = makeDocument('/ws/k.py', KERNEL);
    window.showInputBox.mockResolvedValueOnce('');
    const d = makeDebugger();
    d.runPlanMock.mockRejectedValueOnce(new Error('The Triton Lens server is not running.'));
    expect(await d.debugKernel(doc.uri as never, 'add_kernel')).toBe(false);
    expect(window.showErrorMessage).toHaveBeenCalledWith('Triton Lens: The Triton Lens server is not running.');
    expect(debug.startDebugging).not.toHaveBeenCalled();
  });

  it('does nothing when the program question is cancelled', async () => {
    const doc = makeDocument('/ws/k.py', KERNEL);
    window.showInputBox.mockResolvedValueOnce(undefined);
    expect(await makeDebugger().debugKernel(doc.uri as never, 'add_kernel')).toBe(false);
    expect(debug.startDebugging).not.toHaveBeenCalled();
  });

  it('resolves a launch.json entry into what debugpy reads', async () => {
    const d = makeDebugger({ python: '/env/python' });
    window.activeTextEditor = makeEditor(makeDocument('/ws/active.py', '')) as never;
    const out = await d.resolveDebugConfigurationWithSubstitutedVariables(
      { uri: Uri.file('/ws'), name: 'ws', index: 0 } as never,
      { type: DEBUG_TYPE, request: 'launch', name: 'n', stopProgram: '1,1' },
    );
    expect(out).toMatchObject({
      program: path.join('/ext', 'server', 'triton_lens', 'debug_launcher.py'),
      args: ['/ws/active.py'],
      python: ['/env/python'],
      cwd: '/ws',
      env: { TRITON_INTERPRET: '1', TRITON_LENS_STOP_PROGRAM: '1,1,0' },
    });
    // a restart hands the resolved config back: it is not wrapped twice
    expect(await d.resolveDebugConfigurationWithSubstitutedVariables(undefined, out!)).toBe(out);
  });

  it('reports a bad stopProgram in launch.json instead of starting', async () => {
    const d = makeDebugger();
    const out = await d.resolveDebugConfigurationWithSubstitutedVariables(undefined, {
      type: DEBUG_TYPE,
      request: 'launch',
      name: 'n',
      program: '/ws/k.py',
      stopProgram: 'first',
    });
    expect(out).toBeUndefined();
    expect(window.showErrorMessage).toHaveBeenCalledWith(expect.stringMatching(/stopProgram/));
  });

  it('F5 with no launch.json debugs the active Python file', () => {
    window.activeTextEditor = makeEditor(makeDocument('/ws/k.py', KERNEL)) as never;
    expect(makeDebugger().resolveDebugConfiguration(undefined, { type: '', request: '', name: '' })).toMatchObject({
      type: DEBUG_TYPE,
      program: '/ws/k.py',
    });
  });

  it('uses `python -m debugpy.adapter` of the interpreter (the venv has debugpy)', async () => {
    const desc = await makeDebugger().createDebugAdapterDescriptor({ configuration: { python: [VENV_PY] } } as never);
    expect(desc).toBeInstanceOf(DebugAdapterExecutable);
    expect(desc).toMatchObject({ command: VENV_PY, args: ['-m', 'debugpy.adapter'] });
  });

  it("falls back to the Python extension's debugpy, else says how to install debugpy", async () => {
    // the venv's python without site-packages: a Python that has no debugpy
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-py-'));
    const noDebugpy = path.join(dir, 'python');
    fs.writeFileSync(noDebugpy, `#!/bin/sh\nexec "${VENV_PY}" -S "$@"\n`, { mode: 0o755 });
    const withExt = await makeDebugger({ python: noDebugpy, bundled: '/pyext/debugpy' }).createDebugAdapterDescriptor({
      configuration: {},
    } as never);
    expect(withExt).toMatchObject({ command: noDebugpy, args: ['/pyext/debugpy/adapter'] });
    await expect(
      makeDebugger({ python: noDebugpy }).createDebugAdapterDescriptor({ configuration: {} } as never),
    ).rejects.toThrow(
      `Triton Lens needs debugpy in ${noDebugpy} to debug kernels: run \`${noDebugpy} -m pip install debugpy\``,
    );
  });
});
