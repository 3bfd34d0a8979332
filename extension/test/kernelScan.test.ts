import * as fs from 'fs';
import * as path from 'path';
import { describe, expect, it } from 'vitest';
import { findKernels, kernelAtLine } from '../src/kernelScan';

// shared/ lies beside the repository (../shared from the repo root)
const CORPUS = path.resolve(__dirname, '../../../shared/corpus');
const read = (f: string) => fs.readFileSync(path.join(CORPUS, f), 'utf8');
const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle));

describe('findKernels on the shared corpus', () => {
  it('finds every def under @triton.jit in every corpus file', () => {
    for (const f of fs.readdirSync(CORPUS).filter((x) => x.endsWith('.py'))) {
      const text = read(f);
      const defs = text.split('\n').flatMap((l, i, all) => {
        const m = /^\s*def (\w+)\(/.exec(l);
        if (!m) return [];
        // jit-decorated: an @...jit line among the lines right above (decorators may span lines)
        const above = all.slice(Math.max(0, i - 12), i).join('\n');
        return /@triton\.jit\s*(\n|$)/.test(above.split(/\n\s*\n/).pop() ?? '') ? [m[1]] : [];
      });
      expect(findKernels(text).map((k) => k.name), f).toEqual(defs);
    }
  });

  it('spans the autotune decorator and gives the first body line', () => {
    const text = read('autotune.py');
    const [k] = findKernels(text);
    expect(k.name).toBe('neg_kernel');
    expect(k.startLine).toBe(lineOf(text, '@triton.autotune'));
    expect(k.defLine).toBe(lineOf(text, 'def neg_kernel'));
    expect(k.firstBodyLine).toBe(lineOf(text, 'offs = tl.program_id(0)'));
    expect(k.endLine).toBe(lineOf(text, 'tl.store(out_ptr'));
  });
});

describe('findKernels details', () => {
  it('skips docstrings, handles multi-line signatures and ignores plain functions', () => {
    const text = [
      'import triton',
      '@triton.autotune(',
      '    configs=[triton.Config({"B": 64})],',
      '    key=["n"],',
      ')',
      '@triton.jit',
      'def k(',
      '    x_ptr,',
      '    n,',
      '):',
      '    """Doc',
      '    more doc."""',
      '',
      '    # comment',
      '    pid = tl.program_id(0)',
      '    tl.store(x_ptr + pid, 1)',
      '',
      'def host():',
      '    k[(1,)](x, 1)',
      '@jit',
      'def j(a): return a',
    ].join('\n');
    const ks = findKernels(text);
    expect(ks.map((k) => [k.name, k.startLine, k.defLine, k.firstBodyLine, k.endLine])).toEqual([
      ['k', 1, 6, 14, 15],
      ['j', 19, 20, 20, 20],
    ]);
  });
});

describe('kernelAtLine', () => {
  it('picks the kernel around the cursor, the kernel launched on the line, or the only one', () => {
    const text = read('multi_launch.py');
    const kernels = findKernels(text);
    expect(kernels.length).toBeGreaterThan(0);
    const k0 = kernels[0];
    expect(kernelAtLine(text, k0.firstBodyLine)?.name).toBe(k0.name);
    const launch = text.split('\n').findIndex((l) => new RegExp(`\\b${k0.name}\\s*\\[`).test(l) && !/def /.test(l));
    expect(kernelAtLine(text, launch)?.name).toBe(k0.name);
    const single = read('vector_add.py');
    expect(kernelAtLine(single, 0)?.name).toBe(findKernels(single)[0].name);
  });
});
