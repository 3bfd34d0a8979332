import { beforeEach, describe, expect, it } from 'vitest';
import { mock } from 'vscode';
import { DEFAULTS, expandVariables, getSettings, splitCommandLine } from '../src/settings';

beforeEach(() => mock.reset());

describe('getSettings', () => {
  it('returns the manifest defaults when nothing is set', () => {
    expect(getSettings()).toEqual(DEFAULTS);
  });
  it('reads what the user set', () => {
    mock.config = {
      'tritonLens.timeLimit': 5,
      'tritonLens.runCommands': { '*.py': 'pytest' },
      'tritonLens.inlayHints': false,
    };
    const s = getSettings();
    expect(s.timeLimit).toBe(5);
    expect(s.runCommands).toEqual({ '*.py': 'pytest' });
    expect(s.inlayHints).toBe(false);
    expect(s.memoryLimitMb).toBe(DEFAULTS.memoryLimitMb);
  });
  it('matches the defaults declared in package.json', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      contributes: { configuration: { properties: Record<string, { default: unknown }> } };
    };
    const props = pkg.contributes.configuration.properties;
    for (const [k, v] of Object.entries(DEFAULTS)) expect(props[`tritonLens.${k}`].default, k).toEqual(v);
    expect(Object.keys(props).sort()).toEqual(
      Object.keys(DEFAULTS)
        .map((k) => `tritonLens.${k}`)
        .sort(),
    );
  });
});

// Globs of tritonLens.runCommands are matched by the server (server/triton_lens/source/plan.py, tests/engine/test_plan.py).

describe('splitCommandLine', () => {
  it('splits on blanks and honours quotes and escapes', () => {
    expect(splitCommandLine(`pytest "tests/my file.py" -k 'add and not slow' a\\ b ""`)).toEqual([
      'pytest',
      'tests/my file.py',
      '-k',
      'add and not slow',
      'a b',
      '',
    ]);
  });
});

describe('expandVariables', () => {
  it('expands the VS Code style variables', () => {
    const ctx = { workspaceFolder: '/ws', file: '/ws/k/a.py', home: '/home/u', env: { VENV: '/v' } };
    expect(expandVariables('${workspaceFolder}/.venv/bin/python', ctx)).toBe('/ws/.venv/bin/python');
    expect(expandVariables('${env:VENV}/bin/python', ctx)).toBe('/v/bin/python');
    expect(expandVariables('~/py/bin/python', ctx)).toBe('/home/u/py/bin/python');
    expect(expandVariables('${fileDirname}|${file}|${userHome}', ctx)).toBe('/ws/k|/ws/k/a.py|/home/u');
    expect(expandVariables('${unknown}', ctx)).toBe('${unknown}');
  });
});
