import * as path from 'path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EventEmitter, makeLog, mock, Uri } from 'vscode';
import { checkInterpreter, type Exec, InterpreterResolver, missingMessage, PROBE_SCRIPT } from '../src/python';

const REPO = path.resolve(__dirname, '../..');
const VENV_PY = path.join(REPO, '.venv/bin/python');

beforeEach(() => mock.reset());

describe('checkInterpreter with a real interpreter', () => {
  it('accepts the project venv, which has triton, torch and numpy', async () => {
    const r = await checkInterpreter(VENV_PY);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.probe.version[0]).toBe(3);
  });
  it('names the missing module and the pip command that installs it', async () => {
    const r = await checkInterpreter(VENV_PY, ['numpy', 'no_such_module_tl']);
    expect(r).toMatchObject({ ok: false, reason: 'missing' });
    expect(r.ok ? '' : r.message).toBe(
      `Triton Lens needs no_such_module_tl in ${VENV_PY}: run \`${VENV_PY} -m pip install no_such_module_tl\``,
    );
  });
  it('says when the interpreter does not exist', async () => {
    const r = await checkInterpreter('/nonexistent/bin/python3');
    expect(r).toMatchObject({ ok: false, reason: 'not-found' });
    expect(r.ok ? '' : r.message).toContain('/nonexistent/bin/python3');
  });
});

describe('checkInterpreter decisions', () => {
  const fake =
    (out: object): Exec =>
    async () => ({ stdout: `${JSON.stringify(out)}\n`, stderr: '' });
  it('rejects Python older than 3.10', async () => {
    const r = await checkInterpreter('py', ['numpy'], fake({ executable: 'py', version: [3, 9, 1], missing: [] }));
    expect(r).toMatchObject({ ok: false, reason: 'old-python' });
  });
  it('lists every missing module in one message', async () => {
    const r = await checkInterpreter(
      '/p y/python',
      undefined,
      fake({ executable: 'x', version: [3, 11, 0], missing: ['triton', 'torch'] }),
    );
    expect(r.ok ? '' : r.message).toBe(
      "Triton Lens needs triton, torch in /p y/python: run `'/p y/python' -m pip install triton torch`",
    );
  });
  it('reports a crashing interpreter with its stderr', async () => {
    const exec: Exec = async () => {
      throw Object.assign(new Error('exit 1'), { code: 1, stderr: 'Fatal Python error: boom' });
    };
    const r = await checkInterpreter('py', undefined, exec);
    expect(r).toMatchObject({ ok: false, reason: 'failed' });
    expect(r.ok ? '' : r.message).toContain('Fatal Python error: boom');
  });
  it('probes without importing (find_spec), passing the module names as arguments', async () => {
    const exec = vi.fn<Exec>(async () => ({
      stdout: '{"executable":"p","version":[3,12,0],"missing":[]}',
      stderr: '',
    }));
    await checkInterpreter('p', ['triton', 'torch', 'numpy'], exec);
    expect(exec).toHaveBeenCalledWith('p', ['-c', PROBE_SCRIPT, 'triton', 'torch', 'numpy'], 30000);
    expect(PROBE_SCRIPT).toContain('find_spec');
    expect(PROBE_SCRIPT).not.toMatch(/^import (triton|torch)/m);
  });
  it('formats the message the brief asks for', () => {
    expect(missingMessage('/usr/bin/python3', ['triton'])).toBe(
      'Triton Lens needs triton in /usr/bin/python3: run `/usr/bin/python3 -m pip install triton`',
    );
  });
});

function fakePythonApi(exe: string) {
  const changed = new EventEmitter<unknown>();
  return {
    changed,
    api: {
      environments: {
        getActiveEnvironmentPath: vi.fn(() => ({ id: exe, path: exe })),
        resolveEnvironment: vi.fn(async () => ({ executable: { uri: Uri.file(exe) } })),
        onDidChangeActiveEnvironmentPath: changed.event,
      },
      debug: { getDebuggerPackagePath: vi.fn(async () => '/ext/python/debugpy') },
    },
  };
}

describe('InterpreterResolver', () => {
  it('uses the tritonLens.python setting first, with variables expanded', async () => {
    mock.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
    mock.config = { 'tritonLens.python': '${workspaceFolder}/.venv/bin/python' };
    const { api } = fakePythonApi('/envs/a/bin/python');
    const r = new InterpreterResolver(makeLog() as never, async () => api as never);
    expect(await r.resolve()).toEqual({ path: '/ws/.venv/bin/python', source: 'setting' });
  });
  it('uses the Python extension selection when the setting is empty', async () => {
    const { api } = fakePythonApi('/envs/a/bin/python');
    const r = new InterpreterResolver(makeLog() as never, async () => api as never);
    expect(await r.resolve(Uri.file('/ws/k.py'))).toEqual({ path: '/envs/a/bin/python', source: 'python-extension' });
    expect(api.environments.getActiveEnvironmentPath).toHaveBeenCalled();
    expect(await r.debuggerPackagePath()).toBe('/ext/python/debugpy');
  });
  it('falls back to python3 without the Python extension', async () => {
    const r = new InterpreterResolver(makeLog() as never, async () => undefined);
    expect(await r.resolve()).toEqual({ path: 'python3', source: 'default' });
    expect(await r.debuggerPackagePath()).toBeUndefined();
  });
  it('falls back to python3 when the Python extension fails to load', async () => {
    const log = makeLog();
    const r = new InterpreterResolver(log as never, async () => {
      throw new Error('activation failed');
    });
    expect((await r.resolve()).source).toBe('default');
    expect(log.warn).toHaveBeenCalled();
  });
  it('fires onDidChange when the Python extension selects another interpreter', async () => {
    const { api, changed } = fakePythonApi('/a/python');
    const r = new InterpreterResolver(makeLog() as never, async () => api as never);
    const seen = vi.fn();
    r.onDidChange(seen);
    await r.resolve();
    changed.fire({ id: '/b/python', path: '/b/python' });
    expect(seen).toHaveBeenCalledTimes(1);
    r.dispose();
    changed.fire({});
    expect(seen).toHaveBeenCalledTimes(1);
  });
});
