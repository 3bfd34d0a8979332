// window.__viewer: what tests (tests/webview, tests/viz, tests/e2e) and the render benchmark read of
// the page, since canvases cannot be asserted on from outside. Read-only but for rerender(); its
// names and answers are an interface those tests depend on.

import { followedIterations } from './derive.js';
import { cellToPx, context2d, programColor } from './draw.js';
import {
  RANK,
  R_NONE,
  R_MASK_O,
  R_OTHER,
  R_OOB_O,
  R_MASK_F,
  R_FOLLOW,
  R_MULTI,
  R_OOB_F,
  F_FOLLOW,
  F_OTHER,
  F_MASK_F,
  F_MASK_O,
  F_OOB_F,
  F_OOB_O,
  F_MULTI,
} from './raster.js';
import { isDrawn } from './model.js';
import { state, page } from './store.js';
import { isDark, paletteFor } from './theme.js';

/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').DrawnTensor} DrawnTensor */
/**
 * A cell named by a test: a flat element index, per-dim indices, or an offset (for the bands).
 * @typedef {number | number[] | {offset: number}} Where
 */

/** @type {Record<number, string>} */
const RANK_NAMES = {
  [R_NONE]: 'untouched',
  [R_MASK_O]: 'masked-other',
  [R_OTHER]: 'other',
  [R_OOB_O]: 'oob-other',
  [R_MASK_F]: 'masked-followed',
  [R_FOLLOW]: 'followed',
  [R_MULTI]: 'followed-several',
  [R_OOB_F]: 'oob-followed',
};

/** @param {string | number} t  a tensor's name or index */
function tensorModel(t) {
  if (!state.launch) return null;
  return state.launch.tensors.find((x) => x.name === t || x.index === t) || null;
}

/**
 * The model that draws `where` (flat index, per-dim index or {offset}): an N-D tensor's slice.
 * @param {TensorModel | null} tm
 * @param {Where} where
 */
function drawnBy(tm, where) {
  if (!tm || !tm.slices) return tm;
  const shape = /** @type {number[]} */ (tm.meta.shape);
  const per = shape[shape.length - 1] * shape[shape.length - 2];
  let i = /** @type {number} */ (where);
  if (Array.isArray(where)) {
    i = 0;
    for (let k = 0; k < shape.length; k++) i = i * shape[k] + where[k];
  } else if (where && typeof where === 'object') {
    return tm.slices[0] || null;
  }
  const s = Math.floor(i / per);
  return tm.slices.find((x) => x.layout && x.layout.slice === s) || null;
}

/**
 * @param {DrawnTensor} tm
 * @param {Where} where
 */
function cellOf(tm, where) {
  const lay = tm.layout;
  if (where && typeof where === 'object' && !Array.isArray(where) && 'offset' in where) {
    return lay.placeOffset(where.offset).cell;
  }
  let i = /** @type {number} */ (where);
  if (Array.isArray(where)) {
    i = 0;
    for (let k = 0; k < lay.nd; k++) i = i * lay.shape[k] + where[k];
  }
  return lay.indexToCell(i);
}

/**
 * The canvas pixel that shows a cell (its centre when cells are bigger than a pixel).
 * @param {DrawnTensor} tm
 * @param {number} cell
 */
function cellPixel(tm, cell) {
  const P = tm.layout.P;
  const r = Math.floor(cell / P);
  const c = cell - r * P;
  const g = tm.geom;
  const x = g.x.up > 1 ? c * g.x.up + Math.floor((g.x.up - 1) / 2) : Math.floor(c / g.x.down);
  const y = g.y.up > 1 ? r * g.y.up + Math.floor((g.y.up - 1) / 2) : Math.floor(r / g.y.down);
  return { x, y };
}

/**
 * @param {Window & {__viewer?: object}} win  the page's window
 * @param {string} hostKind  host.kind
 * @param {HTMLElement} header  the element of the followed line's text
 * @param {() => void} rerender  the controller's render of the whole page
 */
export function installTestHook(win, hostKind, header, rerender) {
  win.__viewer = {
    get idle() {
      return page.busy === 0 && page.loadedOnce;
    },
    get eventCount() {
      return page.eventCount;
    },
    get renderCount() {
      return page.renderCount;
    },
    get lastRenderMs() {
      return page.lastRenderMs;
    },
    hostKind,
    /** What the cell of `tensor` (name or index) at `index` (flat, per-dim array, or {offset}) is drawn as. */
    /**
     * @param {string | number} tensor
     * @param {Where} index
     */
    cellState(tensor, index) {
      const tm = drawnBy(tensorModel(tensor), index);
      if (tensorModel(tensor) && !tm) return { drawn: 'hidden' };
      if (!tm || !isDrawn(tm)) return null;
      const cell = cellOf(tm, index);
      if (cell < 0) return { drawn: 'hidden' };
      const f = tm.raster.flags[cell];
      const { x, y } = cellPixel(tm, cell);
      const px = context2d(tm.ui.canvas).getImageData(x, y, 1, 1).data;
      return {
        drawn: RANK_NAMES[RANK[f]],
        followed: !!(f & F_FOLLOW),
        other: !!(f & F_OTHER),
        maskedFollowed: !!(f & F_MASK_F),
        maskedOther: !!(f & F_MASK_O),
        oobFollowed: !!(f & F_OOB_F),
        oobOther: !!(f & F_OOB_O),
        several: !!(f & F_MULTI),
        program: tm.raster.prog[cell],
        pixel: Array.from(px),
        element: tm.layout.cellInfo(cell).kind === 'element',
      };
    },
    /** Viewport coordinates of the centre of a cell (for hover/click in tests). */
    /**
     * @param {string | number} tensor
     * @param {Where} index
     */
    cellPoint(tensor, index) {
      const tm = drawnBy(tensorModel(tensor), index);
      if (!tm || !isDrawn(tm)) return null;
      const cell = cellOf(tm, index);
      if (cell < 0) return null;
      const P = tm.layout.P;
      const r = Math.floor(cell / P);
      const c = cell - r * P;
      const rect = tm.ui.canvas.getBoundingClientRect();
      const sx = rect.width / tm.ui.canvas.width;
      const sy = rect.height / tm.ui.canvas.height;
      const g = tm.geom;
      const x0 = cellToPx(g.x, c),
        x1 = cellToPx(g.x, c + 1);
      const y0 = cellToPx(g.y, r),
        y1 = cellToPx(g.y, r + 1);
      return {
        x: rect.left + ((x0 + Math.max(x1, x0 + 1)) / 2) * sx,
        y: rect.top + ((y0 + Math.max(y1, y0 + 1)) / 2) * sy,
      };
    },
    /** Unpacked colours of the palette of an access kind (program: a function of the program id). */
    palette(kind = 'load') {
      const p = paletteFor(state, kind);
      const un = (/** @type {number} */ v) => [v & 255, (v >>> 8) & 255, (v >>> 16) & 255, v >>> 24];
      const keys = /** @type {const} */ ([
        'follow',
        'other',
        'maskF',
        'maskF2',
        'oobF',
        'oobO',
        'elem',
        'band',
        'bandStripe',
        'multi',
        'gap',
      ]);
      /** @type {[string, unknown][]} */
      const entries = keys.map((k) => [k, un(p[k])]);
      return Object.fromEntries(entries.concat([['program', (/** @type {number} */ i) => un(p.progCols[i])]]));
    },
    /** @param {number} p */
    programColor(p) {
      return programColor(p, isDark());
    },
    /** @param {string | number} tensor */
    counts(tensor) {
      const tm = tensorModel(tensor);
      return tm && tm.raster ? JSON.parse(JSON.stringify(tm.raster.counts)) : null;
    },
    /** An N-D tensor's shown slices: [{index: [outer..., h], slice}] (null for 1-D / 2-D). */
    /** @param {string | number} tensor */
    slices(tensor) {
      const tm = tensorModel(tensor);
      return tm && tm.slices
        ? tm.slices.map((x) => ({ index: x.sliceIndex, slice: x.layout ? x.layout.slice : null }))
        : null;
    },
    /** @param {string | number} tensor */
    layout(tensor) {
      const tm = (() => {
        const t = tensorModel(tensor);
        return t && t.slices ? t.slices[0] : t;
      })();
      if (!tm || !isDrawn(tm)) return null;
      const l = tm.layout;
      return {
        R: l.R,
        C: l.C,
        Bt: l.Bt,
        Bb: l.Bb,
        Br: l.Br,
        nSlices: l.nSlices,
        slice: l.slice,
        geom: { x: tm.geom.x, y: tm.geom.y },
      };
    },
    state() {
      return {
        kernel: state.kernel && state.kernel.name,
        launch: state.launchInfo && state.launchInfo.index,
        follow: state.follow,
        programs: state.programs ? Array.from(state.programs).sort((a, b) => a - b) : null,
        tensors: state.launch ? state.launch.tensors.map((t) => t.name) : [],
        header: header.textContent,
        values: state.values,
        iteration: state.iteration,
        iterations: followedIterations(state),
        playing: state.playing !== null,
        gpu: state.gpu,
      };
    },
    /** Values view of a tensor: the decoded map's summary and the histogram shown. */
    /** @param {string | number} tensor */
    values(tensor) {
      const tm = tensorModel(tensor);
      if (!tm || !tm.valueMaps) return null;
      const e = tm.valueMaps.get(state.values);
      // a map's fields, or only `none` (why there is none)
      const vm = /** @type {Partial<import('./values.js').ValueMap> & {none?: string} | null} */ (
        e && e.ready ? e.vm : null
      );
      const h = tm.ui && tm.ui.histogram ? tm.ui.histogram.hist : null;
      return vm
        ? {
            none: vm.none || null,
            block: vm.block,
            lo: vm.lo,
            hi: vm.hi,
            cells: vm.q ? vm.q.length : 0,
            rowsStep: vm.rowsStep,
            colsStep: vm.colsStep,
            note: tm.ui && tm.ui.values ? tm.ui.values.textContent : '',
            histogram: h ? { line: h.line, elements: h.elements, touched: h.touched, counts: h.counts } : null,
          }
        : null;
    },
    renderTimes() {
      return state.launch ? state.launch.tensors.map((t) => ({ name: t.name, ms: t.renderMs })) : [];
    },
    rerender() {
      if (state.launch) rerender();
      return page.lastRenderMs;
    },
  };
}
