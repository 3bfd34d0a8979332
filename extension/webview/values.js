// Values view: the host's quantised value map (analysis/viewer_extras.py value_map) -> per-cell
// colours of a tensor view, and the histogram of the followed access's elements.
// Pure functions over typed arrays (the canvas drawing of the histogram aside).

import { packRGBA, mix, context2d } from './draw.js';
import { F_FOLLOW } from './raster.js';

/** @typedef {import('../src/viewerProtocol').ValueMapResult} ValueMapResult */
/** @typedef {Extract<ValueMapResult, {q: string}>} ValueMapData */
/** @typedef {import('../src/viewerProtocol').Histogram} Histogram */
/** @typedef {import('./draw.js').RGBA} RGBA */
/**
 * A decoded value map (q: one quantised value per block of `block` elements), or why there is none.
 * A tensor over the host's value limit sends a sample: 1 in `rowsStep` rows x 1 in `colsStep` columns
 * (`sampleCols` per sampled row, `sampled` elements), and `q` is of the sample's flat order.
 * @typedef {{q: Uint8Array, block: number, lo: number, hi: number, numel: number, when: string, histograms: Histogram[], rowsStep: number, colsStep: number, sampleCols: number, sampled: number, none?: undefined}} ValueMap
 * @typedef {{none: string}} NoValueMap
 */

// A perceptually ordered map (viridis anchors), 255 steps; index 255 is for NaN/inf.
const ANCHORS = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 74, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [109, 205, 89],
  [180, 222, 44],
  [253, 231, 37],
];
const NONFINITE = [255, 0, 255, 255];

/**
 * @param {RGBA | null} dimWith
 * @param {number} t
 */
function buildMap(dimWith, t) {
  const out = new Uint32Array(256);
  for (let i = 0; i < 255; i++) {
    const x = (i / 254) * (ANCHORS.length - 1);
    const k = Math.min(ANCHORS.length - 2, Math.floor(x));
    const f = x - k;
    let c = [0, 1, 2].map((j) => Math.round(ANCHORS[k][j] * (1 - f) + ANCHORS[k + 1][j] * f)).concat([255]);
    if (dimWith) c = mix(c, dimWith, t);
    out[i] = packRGBA(c[0], c[1], c[2], 255);
  }
  const nf = dimWith ? mix(NONFINITE, dimWith, t) : NONFINITE;
  out[255] = packRGBA(nf[0], nf[1], nf[2], 255);
  return out;
}

/**
 * The colour of quantised value q (0..254; 255 = not finite) as [r, g, b].
 * @param {number} q
 */
export function valueColor(q) {
  const c = buildMap(null, 0)[q];
  return [c & 255, (c >>> 8) & 255, (c >>> 16) & 255];
}

/**
 * Decode a valueMap answer: {q: Uint8Array, block, lo, hi, numel, histograms} or {none: reason}.
 * @param {ValueMapResult | null | undefined} answer
 * @returns {ValueMap | NoValueMap}
 */
export function decodeValueMap(answer) {
  // The host's JSON, checked field by field: either variant, or neither.
  const r = /** @type {Partial<ValueMapData & {values: null, reason: string}> | null | undefined} */ (answer);
  if (!r || r.values === null || typeof r.q !== 'string') return { none: (r && r.reason) || 'values not kept' };
  const bin = atob(r.q);
  const q = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) q[i] = bin.charCodeAt(i);
  return {
    q,
    block: /** @type {number} */ (r.block) | 0 || 1,
    lo: /** @type {number} */ (r.lo),
    hi: /** @type {number} */ (r.hi),
    numel: /** @type {number} */ (r.numel),
    when: /** @type {string} */ (r.when),
    histograms: Array.isArray(r.histograms) ? r.histograms : [],
    rowsStep: Math.max(1, /** @type {number} */ (r.rows_step) | 0),
    colsStep: Math.max(1, /** @type {number} */ (r.cols_step) | 0),
    sampleCols: /** @type {number} */ (r.sample_cols) | 0,
    sampled: /** @type {number} */ (r.sampled) | 0 || /** @type {number} */ (r.numel),
  };
}

/**
 * Whether the map is of a sample of the tensor's values (rather than all of them).
 * @param {ValueMap} vm
 */
export function isSampled(vm) {
  return vm.rowsStep > 1 || vm.colsStep > 1;
}

/**
 * The index in `vm.q` of flat element `a` of a tensor with `cols` columns (its last dimension): its
 * block, or for a sample the block of the sampled element at or before it in its row and column.
 * @param {ValueMap} vm
 * @param {number} cols
 * @param {number} a
 */
export function valueIndex(vm, cols, a) {
  if (!isSampled(vm)) return Math.floor(a / vm.block);
  const r = Math.floor(a / cols);
  const c = a - r * cols;
  return Math.floor((Math.floor(r / vm.rowsStep) * vm.sampleCols + Math.floor(c / vm.colsStep)) / vm.block);
}

/**
 * A value map to colour with: not missing, not loading, not a reason why there is none.
 * @param {ValueMap | NoValueMap | null | undefined} vm
 * @returns {vm is ValueMap}
 */
export function isValueMap(vm) {
  return !!vm && !vm.none;
}

/**
 * Per-cell colours (packed, 0 = none) of the element cells of a layout: the value colour, dimmed
 * into `bg` on cells the followed line did not touch so the followed access stands out.
 */
/**
 * @param {import('./layout.js').Layout} layout
 * @param {ValueMap} vm
 * @param {Uint8Array} flags  the raster's
 * @param {RGBA} bg
 */
export function valueColors(layout, vm, flags, bg) {
  const n = layout.Rt * layout.P;
  const out = new Uint32Array(n);
  const bright = buildMap(null, 0);
  const dim = buildMap(bg, 0.6);
  const { viewLo, viewHi, C, P, Bt } = layout;
  const q = vm.q;
  const cols = layout.shape[layout.shape.length - 1] || 1;
  for (let a = viewLo; a < viewHi; a++) {
    const v = a - viewLo;
    const r = Math.floor(v / C);
    const cell = (r + Bt) * P + (v - r * C);
    const qi = q[valueIndex(vm, cols, a)];
    if (qi === undefined) continue;
    out[cell] = flags[cell] & F_FOLLOW ? bright[qi] : dim[qi];
  }
  return out;
}

/**
 * The histogram of the followed line's elements, or null.
 * @param {ValueMap | NoValueMap | null | undefined} vm
 * @param {{file: string, line: number} | null} follow
 * @returns {Histogram | null}
 */
export function histogramFor(vm, follow) {
  if (!isValueMap(vm) || !follow) return null;
  return vm.histograms.find((h) => h.line === follow.line && (!follow.file || h.file === follow.file)) || null;
}

/**
 * Draw a histogram (counts over [lo, hi]) into a canvas, bars in the value colours.
 * @param {HTMLCanvasElement} canvas
 * @param {Histogram} h
 * @param {string} css  the axis line's colour
 */
export function drawHistogram(canvas, h, css) {
  const dpr = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
  const W = 320,
    H = 72;
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  const ctx = context2d(canvas);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  const counts = h.counts || [];
  const max = Math.max(1, ...counts);
  const bw = W / Math.max(1, counts.length);
  counts.forEach((c, i) => {
    const [r, g, b] = valueColor(Math.round(((i + 0.5) / counts.length) * 254));
    ctx.fillStyle = `rgb(${r}, ${g}, ${b})`;
    const bh = c ? Math.max(1, (c / max) * (H - 4)) : 0;
    ctx.fillRect(i * bw, H - bh, Math.max(1, bw - 1), bh);
  });
  ctx.strokeStyle = css;
  ctx.beginPath();
  ctx.moveTo(0, H - 0.5);
  ctx.lineTo(W, H - 0.5);
  ctx.stroke();
}

/**
 * Draw a tl.dot tile's values (a dotTiles answer's a, b or c): one pixel a cell, in the value colours.
 * @param {HTMLCanvasElement} canvas
 * @param {import('../src/viewerProtocol').Tile} tile
 */
export function drawTile(canvas, tile) {
  const [rows, cols] = tile.cells;
  canvas.width = Math.max(1, cols);
  canvas.height = Math.max(1, rows);
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const bin = atob(tile.q);
  const map = buildMap(null, 0);
  const img = ctx.createImageData(canvas.width, canvas.height);
  const px = new Uint32Array(img.data.buffer);
  for (let i = 0; i < Math.min(bin.length, px.length); i++) px[i] = map[bin.charCodeAt(i)];
  ctx.putImageData(img, 0, 0);
}
