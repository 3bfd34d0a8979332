// Model: the host's JSON (access maps, tl.dot executions) -> the page's data structures, and
// the questions the views ask of them (which lines, which loop steps, which operations a
// program ran). No DOM here.

import { decodeEnc } from './encoding.js';
import { offsetExtent } from './raster.js';
import { linearPid } from './ui.js';

/** @typedef {import('../src/viewerProtocol').AccessMapResult} AccessMapResult */
/** @typedef {import('../src/viewerProtocol').Tensor} Tensor */
/** @typedef {import('../src/viewerProtocol').DotsResult} DotsResult */
/** @typedef {import('../src/viewerProtocol').DotExecution} DotExecution */
/** @typedef {import('../src/viewerProtocol').DotSite} DotSite */
/** @typedef {import('./encoding.js').EncSet} EncSet */
/** @typedef {import('./layout.js').Extent} Extent */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./raster.js').Raster} Raster */
/** @typedef {import('./draw.js').ViewGeometry} ViewGeometry */
/** @typedef {import('./values.js').ValueMap} ValueMap */
/** @typedef {import('./values.js').NoValueMap} NoValueMap */

/**
 * What the loader got for one tensor: its access map, or why there is none (and what the overview
 * knows of the tensor).
 * @typedef {AccessMapResult | {error: string, tensor: TensorMeta}} TensorMapAnswer
 */
/**
 * The tensor: the access map's description; for a tensor without one, what the overview knows.
 * @typedef {{index: number, name: string} & Partial<Tensor>} TensorMeta
 */
/**
 * A tl.load / tl.store / atomic call site.
 * @typedef {{id: number, file: string, line: number, endLine: number, col: number, kind: string, op: string}} SiteModel
 */
/** @typedef {{lanes: number, active: number, touched: EncSet, masked: EncSet, oob: EncSet}} StepModel */
/**
 * What one program did at one site, over all its executions.
 * @typedef {object} AccessModel
 * @property {number} site
 * @property {number} prog  linear program id
 * @property {EncSet} touched  element indices of active in-bounds lanes
 * @property {EncSet} masked  offsets of masked-off lanes
 * @property {EncSet} oob  offsets of active out-of-bounds lanes
 * @property {number} lanes
 * @property {number} active
 * @property {number} executions
 * @property {number[]} rows  the executions' rows in the program's order of operations
 * @property {StepModel[] | null} steps  one per loop iteration (sent for loops only)
 */
/**
 * A value map being fetched (ready: false) or fetched (vm: the map, or why there is none).
 * @typedef {{ready: boolean, vm: ValueMap | NoValueMap | null}} ValueMapEntry
 */
/** @typedef {{start: number, values: (number | string | null)[], sampled: number[] | null}} ValueBlock  sampled: [rows, columns] steps of a large tensor's kept values */
/**
 * A tensor's view: a 1-D tensor's row width, an N-D tensor's (or a slice's) slice.
 * @typedef {{wrap?: number, slice: number}} TensorView
 */
/**
 * A card's elements: the tensor card's (ui.js buildTensorCard) or a slice's (its own canvas, no
 * controls), plus what the views add.
 * @typedef {object} TensorUi
 * @property {HTMLElement} card
 * @property {HTMLCanvasElement} canvas
 * @property {HTMLElement} wrap
 * @property {HTMLElement} status
 * @property {HTMLElement} oob
 * @property {HTMLElement | null} values  the Values box (a slice has none: its card's shows the values)
 * @property {HTMLElement} [controls]
 * @property {HTMLElement} [slices]
 * @property {HTMLElement} [sliceNote]
 * @property {{canvas: HTMLCanvasElement, hist: import('./values.js').Histogram} | null} [histogram]
 */
/**
 * A tensor argument of the loaded launch, or one 2-D slice of an N-D one. The data comes from
 * buildTensorModel (error: why there is no access map; such a tensor gets a card, never a render,
 * so nothing reads its extent, values or view). `view` is set with the launch model and `ui`
 * when the cards are built, before anything reads them; the rest is what the last render
 * computed, for hit-testing and the test hook.
 * @typedef {object} TensorModel
 * @property {number} index
 * @property {string} name
 * @property {TensorMeta} meta
 * @property {string} [error]
 * @property {Map<number, SiteModel>} sites
 * @property {AccessModel[]} accesses
 * @property {Extent} extent
 * @property {Map<number, Promise<ValueBlock>>} valueCache  by block start (loader.js valueBlock)
 * @property {Map<string, ValueMapEntry>} valueMaps  by Values mode (loader.js valueMap)
 * @property {boolean} [stepsTruncated]
 * @property {TensorView} view
 * @property {TensorUi} ui
 * @property {Layout | null} [layout]
 * @property {Raster | null} [raster]
 * @property {ViewGeometry} [geom]
 * @property {string} [followKind]
 * @property {number} [renderMs]
 * @property {TensorModel[]} [slices]  an N-D tensor's shown slices
 * @property {TensorModel} [parent]  a slice's tensor
 * @property {number[]} [sliceIndex]  a slice's leading indices
 */
/**
 * A tensor (or slice) the last render drew: laid out, rasterised, on its canvas.
 * @typedef {TensorModel & {layout: Layout, raster: Raster, geom: ViewGeometry}} DrawnTensor
 */
/**
 * Whether the tensor has been drawn, so that its cells can be hit-tested and described.
 * @param {TensorModel} tm
 * @returns {tm is DrawnTensor}
 */
export function isDrawn(tm) {
  return !!(tm.geom && tm.layout && tm.raster);
}
/**
 * Every access line of a launch: the sites on it (a call spanning lines counts from its first).
 * @typedef {{key: string, file: string, line: number, endLine: number, items: {op: string, kind: string, tensor: string}[]}} LineModel
 */
/**
 * @typedef {object} ProgramOp  one memory operation a program ran
 * @property {number} row
 * @property {string} file
 * @property {number} line
 * @property {string} tensor
 * @property {string} kind
 * @property {string} op
 * @property {number} lanes
 * @property {number} active
 * @property {number} iteration
 * @property {number} iterations
 */
/** @typedef {{error: string}} Failed */
/**
 * A tl.dot line of one program: its site, how many times it ran, the execution at the iteration shown
 * and that execution's index in the dots answer (the dotTiles request's `execution`).
 * @typedef {{site: DotSite | {line: number, file: string}, count: number, exec: DotExecution | null, index: number}} DotItem
 */

/**
 * An extra panel's answer (performance, dots) that is an error: the loader's {error} for a failed request.
 * @template T
 * @param {T | Failed} answer
 * @returns {answer is Failed}
 */
export function isFailed(answer) {
  return !!(/** @type {{error?: unknown}} */ (answer).error);
}

/**
 * One tensor's access map -> {index, name, meta, sites, accesses, extent, valueCache}.
 * @param {TensorMapAnswer | null | undefined} answer
 * @param {number} i  its place among the launch's tensors
 * @param {number[]} grid
 * @returns {TensorModel}  without view and ui (derive.js launchModel and the tensors view add them)
 */
export function buildTensorModel(answer, i, grid) {
  // The host's JSON (or the loader's error), checked field by field.
  const m = /** @type {Partial<AccessMapResult> & {error?: string, tensor?: TensorMeta} | null | undefined} */ (answer);
  if (!m || m.error || !m.tensor) {
    const t = (m && m.tensor) || { index: i, name: `tensor ${i}` };
    /** @type {Partial<TensorModel>} */
    const none = {
      index: t.index ?? i,
      name: String(t.name ?? `tensor ${i}`),
      meta: t,
      error: (m && m.error) || 'no data',
      accesses: [],
      sites: new Map(),
    };
    return /** @type {TensorModel} */ (none);
  }
  /** @type {Map<number, SiteModel>} */
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
  /** @type {AccessModel[]} */
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
  /** @type {Partial<TensorModel>} */
  const tm = {
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
  return /** @type {TensorModel} */ (tm);
}

/**
 * Every source line with an access in the launch: key -> {file, line, endLine, items}.
 * @param {TensorModel[]} tensors
 * @returns {Map<string, LineModel>}
 */
export function collectLines(tensors) {
  /** @type {Map<string, LineModel>} */
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

/**
 * How many loop iterations the accesses of the followed sites have (0: not in a loop).
 * @param {TensorModel[]} tensors
 * @param {(s: SiteModel) => boolean} isFollowedSite
 */
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
 * @param {TensorModel} tm
 * @param {number | null} iteration
 * @param {(s: SiteModel) => boolean} isFollowedSite
 * @returns {import('./raster.js').DrawnAccess[]}
 */
export function accessesAtIteration(tm, iteration, isFollowedSite) {
  if (iteration === null) return tm.accesses;
  /** @type {import('./raster.js').DrawnAccess[]} */
  const out = [];
  for (const a of tm.accesses) {
    const s = tm.sites.get(a.site);
    if (!s || !isFollowedSite(s)) {
      out.push(a);
      continue;
    }
    const step = a.steps ? a.steps[iteration] : iteration === 0 ? a : null;
    if (step)
      out.push({
        site: a.site,
        prog: a.prog,
        touched: step.touched,
        masked: step.masked,
        oob: step.oob,
        active: step.active,
      });
  }
  return out;
}

/**
 * The memory operations program `prog` ran, in order: [{row, line, file, tensor, kind, op, lanes,
 * active, iteration}]. Built from the access maps' execution rows.
 * @param {TensorModel[]} tensors
 * @param {number} prog
 */
export function programOps(tensors, prog) {
  /** @type {ProgramOp[]} */
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

/**
 * tl.dot executions of one program at one iteration (null: the first), per dot site.
 * @param {DotsResult | null | undefined} dots
 * @param {number} prog
 * @param {number | null} iteration
 * @returns {DotItem[]}
 */
export function dotsOf(dots, prog, iteration) {
  if (!dots || !Array.isArray(dots.executions)) return [];
  const mine = dots.executions.filter((d) => d.linear === prog);
  /** @type {Map<number, DotExecution[]>} */
  const bySite = new Map();
  for (const d of mine) {
    const list = bySite.get(d.site);
    if (list) list.push(d);
    else bySite.set(d.site, [d]);
  }
  /** @type {DotItem[]} */
  const out = [];
  for (const [site, list] of bySite) {
    const pick = list.find((d) => d.iteration === (iteration ?? 0)) || null;
    const index = pick ? dots.executions.indexOf(pick) : -1;
    out.push({ site: (dots.sites || [])[site] || { line: 0, file: '' }, count: list.length, exec: pick, index });
  }
  return out;
}
