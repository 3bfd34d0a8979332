// Model: the host's JSON (access maps, tl.dot executions) -> the page's data structures, and
// the questions the views ask of them (which lines, which loop steps, which operations a
// program ran). No DOM here.

import { decodeEnc } from './encoding.js';
import { offsetExtent } from './raster.js';
import { linearPid } from './ui.js';

/** One tensor's access map -> {index, name, meta, sites, accesses, extent, valueCache}. */
export function buildTensorModel(m, i, grid) {
  if (!m || m.error || !m.tensor) {
    const t = (m && m.tensor) || { index: i, name: `tensor ${i}` };
    return {
      index: t.index ?? i,
      name: String(t.name ?? `tensor ${i}`),
      meta: t,
      error: (m && m.error) || 'no data',
      accesses: [],
      sites: new Map(),
    };
  }
  const sites = new Map();
  for (const s of m.sites || []) {
    sites.set(s.id, {
      id: s.id,
      file: String(s.file || ''),
      line: Number(s.line) || 0,
      endLine: Number(s.end_line || s.line) || 0,
      col: s.col,
      kind: String(s.kind || 'load'),
      op: String(s.op || `tl.${s.kind || 'load'}`),
    });
  }
  const accesses = [];
  for (const a of m.accesses || []) {
    accesses.push({
      site: a.site,
      prog: linearPid(a.program || [0, 0, 0], grid),
      touched: decodeEnc(a.touched),
      masked: decodeEnc(a.masked),
      oob: decodeEnc(a.oob),
      lanes: a.lanes | 0,
      active: a.active | 0,
      executions: a.executions | 0 || 1,
      rows: Array.isArray(a.rows) ? a.rows : [],
      // Loop steps: iteration i of this (site, program) is steps[i] (only sent for loops).
      steps: Array.isArray(a.steps)
        ? a.steps.map((s) => ({
            lanes: s.lanes | 0,
            active: s.active | 0,
            touched: decodeEnc(s.touched),
            masked: decodeEnc(s.masked),
            oob: decodeEnc(s.oob),
          }))
        : null,
    });
  }
  const meta = m.tensor;
  return {
    index: meta.index ?? i,
    name: String(meta.name ?? `tensor ${i}`),
    meta,
    sites,
    accesses,
    extent: offsetExtent(accesses),
    valueCache: new Map(),
    valueMaps: new Map(),
    stepsTruncated: !!m.steps_truncated,
  };
}

/** Every source line with an access in the launch: key -> {file, line, endLine, items}. */
export function collectLines(tensors) {
  const lines = new Map();
  for (const tm of tensors) {
    for (const s of tm.sites.values()) {
      if (!tm.accesses.some((a) => a.site === s.id)) continue;
      const key = `${s.file}\n${s.line}`;
      let L = lines.get(key);
      if (!L) {
        L = { key, file: s.file, line: s.line, endLine: s.endLine, items: [] };
        lines.set(key, L);
      }
      L.endLine = Math.max(L.endLine, s.endLine);
      L.items.push({ op: s.op, kind: s.kind, tensor: tm.name });
    }
  }
  return new Map(
    Array.from(lines.entries()).sort(
      (a, b) => (a[1].file === b[1].file ? 0 : a[1].file < b[1].file ? -1 : 1) || a[1].line - b[1].line,
    ),
  );
}

/** How many loop iterations the accesses of the followed sites have (0: not in a loop). */
export function iterationCount(tensors, isFollowedSite) {
  let n = 0;
  for (const tm of tensors) {
    for (const a of tm.accesses) {
      const s = tm.sites.get(a.site);
      if (s && isFollowedSite(s) && a.executions > 1) n = Math.max(n, a.executions);
    }
  }
  return n;
}

/**
 * The accesses to draw: at `iteration` (null = all, merged), the followed sites' accesses show
 * only that iteration's sets; an access with no steps ran once (iteration 0).
 */
export function accessesAtIteration(tm, iteration, isFollowedSite) {
  if (iteration === null) return tm.accesses;
  const out = [];
  for (const a of tm.accesses) {
    const s = tm.sites.get(a.site);
    if (!s || !isFollowedSite(s)) {
      out.push(a);
      continue;
    }
    const step = a.steps ? a.steps[iteration] : iteration === 0 ? a : null;
    if (step) out.push({ site: a.site, prog: a.prog, touched: step.touched, masked: step.masked, oob: step.oob });
  }
  return out;
}

/**
 * The memory operations program `prog` ran, in order: [{row, line, file, tensor, kind, op, lanes,
 * active, iteration}]. Built from the access maps' execution rows.
 */
export function programOps(tensors, prog) {
  const ops = [];
  for (const tm of tensors) {
    for (const a of tm.accesses) {
      if (a.prog !== prog) continue;
      const s = tm.sites.get(a.site);
      if (!s) continue;
      a.rows.forEach((row, i) => {
        const st = a.steps ? a.steps[i] : null;
        ops.push({
          row,
          file: s.file,
          line: s.line,
          tensor: tm.name,
          kind: s.kind,
          op: s.op,
          lanes: st ? st.lanes : a.executions === 1 ? a.lanes : Math.round(a.lanes / a.executions),
          active: st ? st.active : a.executions === 1 ? a.active : Math.round(a.active / a.executions),
          iteration: i,
          iterations: a.rows.length,
        });
      });
    }
  }
  return ops.sort((x, y) => x.row - y.row);
}

/** tl.dot executions of one program at one iteration (null: the first), per dot site. */
export function dotsOf(dots, prog, iteration) {
  if (!dots || !Array.isArray(dots.executions)) return [];
  const mine = dots.executions.filter((d) => d.linear === prog);
  const bySite = new Map();
  for (const d of mine) {
    if (!bySite.has(d.site)) bySite.set(d.site, []);
    bySite.get(d.site).push(d);
  }
  const out = [];
  for (const [site, list] of bySite) {
    const pick = list.find((d) => d.iteration === (iteration ?? 0)) || null;
    out.push({ site: (dots.sites || [])[site] || { line: 0, file: '' }, count: list.length, exec: pick });
  }
  return out;
}
