// Finds @triton.jit kernels in a file's text: which one the cursor is in (or launches), without the server.

export interface KernelDef {
  name: string;
  /** 0-based line of the `def`. */
  defLine: number;
  /** 0-based line of the first decorator. */
  startLine: number;
  /** 0-based last line of the body (last non-blank line indented deeper than the def). */
  endLine: number;
  /** 0-based line of the first statement of the body (after the signature and docstring). */
  firstBodyLine: number;
}

const DECORATOR = /^(\s*)@\s*([\w.]+)/;
const DEF = /^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/;
const JIT = /(^|\.)(jit|autotune|heuristics)$/;

function indentOf(s: string): number {
  return /^\s*/.exec(s)![0].replace(/\t/g, '    ').length;
}

function isBlankOrComment(s: string): boolean {
  return /^\s*(#.*)?$/.test(s);
}

/** Every function decorated with something ending in jit/autotune/heuristics (triton.jit, tl.jit, …). */
export function findKernels(text: string): KernelDef[] {
  const lines = text.split(/\r?\n/);
  const out: KernelDef[] = [];
  let depth = 0;
  let pending: { start: number; jit: boolean } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (depth === 0) {
      const dec = DECORATOR.exec(line);
      const def = DEF.exec(line);
      if (dec) {
        pending ??= { start: i, jit: false };
        if (JIT.test(dec[2])) pending.jit = true;
      } else if (def) {
        if (pending?.jit) out.push(kernelAt(lines, i, def[2], pending.start));
        pending = null;
      } else if (!isBlankOrComment(line)) {
        pending = null;
      }
    }
    depth = Math.max(0, depth + bracketDelta(line));
  }
  return out;
}

function bracketDelta(line: string): number {
  const code = line.replace(/(["'])(?:\\.|(?!\1).)*\1/g, '').replace(/#.*$/, '');
  let d = 0;
  for (const ch of code) {
    if (ch === '(' || ch === '[' || ch === '{') d++;
    else if (ch === ')' || ch === ']' || ch === '}') d--;
  }
  return d;
}

function kernelAt(lines: string[], i: number, name: string, start: number): KernelDef {
  const defIndent = indentOf(lines[i]);
  // end of the signature: where the brackets close and the code ends with ':'
  let sigEnd = i;
  let depth = 0;
  for (let k = i; k < lines.length; k++) {
    depth += bracketDelta(lines[k]);
    if (depth <= 0 && /:\s*$/.test(lines[k].replace(/#.*$/, ''))) {
      sigEnd = k;
      break;
    }
  }
  let end = sigEnd;
  let firstBody = -1;
  let inDoc: string | null = null;
  const firstCode = nextCodeLine(lines, sigEnd + 1);
  for (let k = sigEnd + 1; k < lines.length; k++) {
    const s = lines[k];
    if (inDoc) {
      end = k;
      if (s.includes(inDoc)) inDoc = null;
      continue;
    }
    if (isBlankOrComment(s)) continue;
    if (indentOf(s) <= defIndent) break;
    end = k;
    if (firstBody < 0) {
      const q = /^\s*[rRuU]?("""|\'\'\')/.exec(s);
      if (q && k === firstCode) {
        const rest = s.slice(s.indexOf(q[1]) + 3);
        if (!rest.includes(q[1])) inDoc = q[1];
        continue;
      }
      firstBody = k;
    }
  }
  return { name, defLine: i, startLine: start, endLine: end, firstBodyLine: firstBody < 0 ? sigEnd : firstBody };
}

function nextCodeLine(lines: string[], from: number): number {
  for (let k = from; k < lines.length; k++) if (!isBlankOrComment(lines[k])) return k;
  return -1;
}

/**
 * The kernel for a 0-based cursor line: the one whose decorators..body contain it, else the one launched on that
 * line (`name[grid](...)`), else the only kernel of the file.
 */
export function kernelAtLine(text: string, line: number): KernelDef | undefined {
  const kernels = findKernels(text);
  const inside = kernels.find((k) => line >= k.startLine && line <= k.endLine);
  if (inside) return inside;
  const src = text.split(/\r?\n/)[line] ?? '';
  for (const m of src.matchAll(/([A-Za-z_]\w*)\s*\[/g)) {
    const k = kernels.find((x) => x.name === m[1]);
    if (k) return k;
  }
  return kernels.length === 1 ? kernels[0] : undefined;
}
