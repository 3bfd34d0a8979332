import { beforeEach, describe, expect, it, vi } from 'vitest';
import { commands, makeDocument, makeEditor, makeLog, mock, Uri, window } from 'vscode';
import { COMMANDS, registerCommands, toUri } from '../src/commands';

const TEXT = [
  'import triton',
  '@triton.jit',
  'def a_kernel(x):',
  '    tl.load(x)',
  '@triton.jit',
  'def b_kernel(x):',
  '    tl.store(x, 1)',
  '',
  'a_kernel[(1,)](t)',
].join('\n');

// What the server's kernel finder answers for TEXT (tested on the Python side): the kernel the cursor line is in
// or launches, by 0-based line.
const KERNELS = [
  { name: 'a_kernel', line: 2, col: 4, firstLine: 1, endLine: 3, bodyLine: 3, exact: true, params: [] },
  { name: 'b_kernel', line: 5, col: 4, firstLine: 4, endLine: 6, bodyLine: 6, exact: true, params: [] },
];
const AT: Record<number, number> = { 1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 1, 8: 0 };

function fakeOutline(method: string, params: { uri: string; text: string; line?: number }) {
  expect(method).toBe('tritonLens/kernelOutline');
  if (!params.text.includes('@triton.jit')) return { kernels: [], at: null };
  return { kernels: KERNELS, at: params.line !== undefined && params.line in AT ? AT[params.line] : null };
}

function setup() {
  const deps = {
    server: { restart: vi.fn(async () => {}), request: vi.fn(async (m: string, p: never) => fakeOutline(m, p)) },
    log: makeLog(),
    accessMap: { show: vi.fn() },
    cursor: { reset: vi.fn(), flush: vi.fn() },
    debugger: { debugKernel: vi.fn(async () => true) },
  };
  registerCommands(deps as never);
  const handlers = new Map(commands.registerCommand.mock.calls.map(([id, fn]) => [id, fn]));
  return { deps, run: (id: string, ...args: unknown[]) => handlers.get(id)!(...args) };
}

beforeEach(() => {
  mock.reset();
  vi.clearAllMocks();
});

describe('commands', () => {
  it('registers every command the manifest declares', async () => {
    setup();
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      contributes: { commands: { command: string }[] };
    };
    const declared = pkg.contributes.commands.map((c) => c.command).sort();
    expect(commands.registerCommand.mock.calls.map((c) => c[0]).sort()).toEqual(declared);
    expect(Object.values(COMMANDS).sort()).toEqual(declared);
  });

  it('code lens "Visualize": [uri string, kernel, 0-based def line] -> panel for that kernel', async () => {
    const { deps, run } = setup();
    await run(COMMANDS.visualize, 'file:///w/k.py', 'add_kernel', 7);
    expect(deps.cursor.reset).toHaveBeenCalled();
    const [uri, name, line] = deps.accessMap.show.mock.calls[0];
    expect([String(uri), name, line]).toEqual(['file:///w/k.py', 'add_kernel', 8]);
  });

  it('"Visualize Kernel at Cursor" picks the kernel around the cursor and follows the cursor line', async () => {
    const { deps, run } = setup();
    window.activeTextEditor = makeEditor(makeDocument('/w/k.py', TEXT), 6) as never;
    await run(COMMANDS.visualizeAtCursor);
    expect(deps.accessMap.show.mock.calls[0].slice(1)).toEqual(['b_kernel', 6]);
    expect(deps.cursor.flush).toHaveBeenCalled();
  });

  it('asks which kernel when the cursor is in none of several', async () => {
    const { deps, run } = setup();
    window.activeTextEditor = makeEditor(makeDocument('/w/k.py', TEXT), 0) as never;
    window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as unknown[])[1]);
    await run(COMMANDS.visualizeAtCursor);
    expect(deps.accessMap.show.mock.calls[0][1]).toBe('b_kernel');
  });

  it("sends the editor's text and cursor line to the server's kernel finder", async () => {
    const { deps, run } = setup();
    window.activeTextEditor = makeEditor(makeDocument('/w/k.py', TEXT), 6) as never;
    await run(COMMANDS.visualizeAtCursor);
    expect(deps.server.request).toHaveBeenCalledWith('tritonLens/kernelOutline', {
      uri: 'file:///w/k.py',
      text: TEXT,
      line: 6,
    });
  });

  it("shows the server's error when it cannot answer", async () => {
    const { deps, run } = setup();
    deps.server.request.mockRejectedValueOnce(new Error('The Triton Lens server is not running.'));
    window.activeTextEditor = makeEditor(makeDocument('/w/k.py', TEXT), 6) as never;
    await run(COMMANDS.visualizeAtCursor);
    expect(deps.accessMap.show).not.toHaveBeenCalled();
    expect(window.showErrorMessage).toHaveBeenCalledWith(expect.stringMatching(/server is not running/));
  });

  it('says so when there is no kernel', async () => {
    const { deps, run } = setup();
    window.activeTextEditor = makeEditor(makeDocument('/w/plain.py', 'x = 1\n'), 0) as never;
    await run(COMMANDS.visualizeAtCursor);
    expect(deps.accessMap.show).not.toHaveBeenCalled();
    expect(window.showInformationMessage).toHaveBeenCalledWith(expect.stringMatching(/no @triton.jit kernel/));
  });

  it('code lens "Debug this kernel": [uri, kernel]', async () => {
    const { deps, run } = setup();
    await run(COMMANDS.debugKernel, 'file:///w/k.py', 'a_kernel');
    const [uri, name] = deps.debugger.debugKernel.mock.calls[0] as unknown as [Uri, string];
    expect([uri.fsPath, name]).toEqual(['/w/k.py', 'a_kernel']);
    window.activeTextEditor = makeEditor(makeDocument('/w/k.py', TEXT), 8) as never; // on the launch line
    await run(COMMANDS.debugKernelAtCursor);
    expect(deps.debugger.debugKernel.mock.calls[1][1]).toBe('a_kernel');
  });

  it('restart and show output', async () => {
    const { deps, run } = setup();
    await run(COMMANDS.restartServer);
    expect(deps.server.restart).toHaveBeenCalled();
    await run(COMMANDS.showOutput);
    expect(deps.log.show).toHaveBeenCalled();
  });

  it('toUri accepts URI strings, paths and Uris', () => {
    expect(toUri('file:///a/b.py')?.fsPath).toBe('/a/b.py');
    expect(toUri('/a/b.py')?.fsPath).toBe('/a/b.py');
    const u = Uri.file('/c.py');
    expect(toUri(u)).toBe(u);
    expect(toUri(undefined)).toBeUndefined();
  });
});
