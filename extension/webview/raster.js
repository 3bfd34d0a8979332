// Rasterise decoded access sets into per-cell typed arrays for one tensor view.
// Work is proportional to the number of elements in the sets (run by run, row segment by row
// segment), never one JS object per element.

import { forEachRun, EMPTY } from './encoding.js';

/** @typedef {import('./encoding.js').EncSet} EncSet */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./layout.js').Extent} Extent */
/**
 * One access as drawn: a (site, program)'s sets, of all its iterations or of one.
 * @typedef {{site: number, prog: number, touched: EncSet, masked: EncSet, oob: EncSet, active?: number}} DrawnAccess  active: its active lanes
 */
/**
 * @typedef {{before: number, past: number, padding: number, hidden: number}} OobCounts
 * touchedF / touchedO: distinct elements of this view the followed / other lines touched; lanesF: the
 * active lanes of the followed line's accesses drawn (an element read by 16 programs: 1 element, 16 lanes)
 * @typedef {{oobF: OobCounts, oobO: OobCounts, maskedF: number, maskedO: number, touchedF: number, touchedO: number, lanesF: number}} Counts
 * @typedef {{flags: Uint8Array, prog: Int32Array, counts: Counts}} Raster
 */

// Per-cell flag bits.
export const F_FOLLOW = 1; //   touched (active, in-bounds lane) by an access on the followed line
export const F_OTHER = 2; //    touched by an access on another line
export const F_MASK_F = 4; //   address of a masked-off lane of the followed line
export const F_MASK_O = 8; //   ... of another line
export const F_OOB_F = 16; //   address of an active out-of-bounds lane of the followed line
export const F_OOB_O = 32; //   ... of another line
export const F_MULTI = 64; //   touched on the followed line by more than one selected program

/** Display rank of a cell's flags (higher wins when a pixel covers several cells). */
export const RANK = new Uint8Array(256);
export const R_NONE = 0,
  R_MASK_O = 1,
  R_OTHER = 2,
  R_OOB_O = 3,
  R_MASK_F = 4,
  R_FOLLOW = 5,
  R_MULTI = 6,
  R_OOB_F = 7;
for (let f = 0; f < 256; f++) {
  let r = R_NONE;
  if (f & F_MASK_O) r = R_MASK_O;
  if (f & F_OTHER) r = R_OTHER;
  if (f & F_OOB_O) r = R_OOB_O;
  if (f & F_MASK_F) r = R_MASK_F;
  if (f & F_FOLLOW) r = R_FOLLOW;
  if (f & F_FOLLOW && f & F_MULTI) r = R_MULTI;
  if (f & F_OOB_F) r = R_OOB_F;
  RANK[f] = r;
}

/**
 * @param {Layout} layout
 * @param {DrawnAccess[]} accesses  with decoded sets; prog = linear program id
 * @param {(siteId: number) => boolean} isFollowed
 * @param {(prog: number) => boolean} isSelected
 * @returns {Raster}
 */
export function rasterize(layout, accesses, isFollowed, isSelected) {
  const n = layout.Rt * layout.P;
  const flags = new Uint8Array(n);
  const prog = new Int32Array(n).fill(-1);
  /** @type {Counts} */
  const counts = {
    oobF: { before: 0, past: 0, padding: 0, hidden: 0 },
    oobO: { before: 0, past: 0, padding: 0, hidden: 0 },
    maskedF: 0,
    maskedO: 0,
    touchedF: 0,
    touchedO: 0,
    lanesF: 0,
  };
  const { viewLo, viewHi, C, P, Bt } = layout;

  // Offsets that can land on a cell of this view (bands included). The corner cells have one: only
  // a column past C of a non-nested layout has none, and such a layout has no right band.
  /** @typedef {import('./layout.js').ElementCell | import('./layout.js').OutsideCell} PlacedCell */
  const first = /** @type {PlacedCell} */ (layout.cellInfo(0));
  const last = /** @type {PlacedCell} */ (layout.cellInfo(n - 1));
  const loLimit = Bt > 0 ? first.offset : layout.minElemOffset;
  const hiLimit = last.offset;

  /**
   * @param {number} s
   * @param {number} len
   * @param {number} bit
   * @param {number} p
   */
  function fillIndexRun(s, len, bit, p) {
    let a = Math.max(s, viewLo);
    const b = Math.min(s + len, viewHi);
    while (a < b) {
      const v = a - viewLo;
      const r = Math.floor(v / C);
      const c0 = v - r * C;
      const segEnd = Math.min(b, a + (C - c0));
      let cell = (r + Bt) * P + c0;
      const end = cell + (segEnd - a);
      if (bit === F_FOLLOW) {
        for (; cell < end; cell++) {
          const q = prog[cell];
          if (q === -1) prog[cell] = p;
          else if (q !== p) flags[cell] |= F_MULTI;
          flags[cell] |= F_FOLLOW;
        }
      } else {
        for (; cell < end; cell++) flags[cell] |= bit;
      }
      a = segEnd;
    }
  }

  /**
   * @param {number} s
   * @param {number} len
   * @param {number} bit
   */
  function fillOffsetRun(s, len, bit) {
    const e = s + len; // exclusive
    if (layout.contiguous) {
      // in-bounds part: offset == flat index
      const a = Math.max(s, 0);
      const b = Math.min(e, layout.numel);
      if (b > a) fillIndexRun(a, b - a, bit, -1);
      placeSlow(s, Math.min(e, 0), bit);
      placeSlow(Math.max(s, layout.numel), e, bit);
    } else {
      placeSlow(s, e, bit);
    }
  }
  let hidden = 0;
  /**
   * @param {number} a
   * @param {number} b
   * @param {number} bit
   */
  function placeSlow(a, b, bit) {
    if (b <= a) return;
    const lo = Math.max(a, loLimit);
    const hi = Math.min(b, hiLimit + 1);
    hidden += b - a - Math.max(0, hi - lo);
    for (let o = lo; o < hi; o++) {
      const cell = layout.offsetCell(o);
      if (cell < 0) hidden++;
      else flags[cell] |= bit;
    }
  }

  /**
   * @param {EncSet} set
   * @param {OobCounts} acc
   */
  function countOob(set, acc) {
    const minE = layout.minElemOffset;
    const maxE = layout.maxElemOffset;
    forEachRun(set, (s, len) => {
      const e = s + len;
      const before = Math.max(0, Math.min(e, minE) - s);
      const past = Math.max(0, e - Math.max(s, maxE + 1));
      acc.before += before;
      acc.past += past;
      acc.padding += len - before - past;
    });
  }

  for (const a of accesses) {
    if (!isSelected(a.prog)) continue;
    const fol = isFollowed(a.site);
    if (a.touched.kind !== EMPTY) {
      if (fol) forEachRun(a.touched, (s, len) => fillIndexRun(s, len, F_FOLLOW, a.prog));
      else forEachRun(a.touched, (s, len) => fillIndexRun(s, len, F_OTHER, -1));
    }
    if (fol) counts.lanesF += a.active || 0;
    if (a.masked.kind !== EMPTY) {
      if (fol) counts.maskedF += a.masked.count;
      else counts.maskedO += a.masked.count;
      forEachRun(a.masked, (s, len) => fillOffsetRun(s, len, fol ? F_MASK_F : F_MASK_O));
    }
    if (a.oob.kind !== EMPTY) {
      const acc = fol ? counts.oobF : counts.oobO;
      countOob(a.oob, acc);
      hidden = 0;
      forEachRun(a.oob, (s, len) => fillOffsetRun(s, len, fol ? F_OOB_F : F_OOB_O));
      acc.hidden += hidden;
    }
  }
  // distinct elements: cells, each element of the view has one (a sum over the accesses would count an
  // element once per program that touched it)
  for (let i = 0; i < n; i++) {
    const f = flags[i];
    if (f & F_FOLLOW) counts.touchedF++;
    if (f & F_OTHER) counts.touchedO++;
  }
  return { flags, prog, counts };
}

/**
 * Offset extent over every masked/oob set of a tensor: sizes the bands, independent of selection.
 * @param {{masked: EncSet, oob: EncSet}[]} accesses
 * @returns {Extent}
 */
export function offsetExtent(accesses) {
  let minOffset = Infinity;
  let maxOffset = -Infinity;
  let hasNonElement = false;
  for (const a of accesses) {
    for (const s of [a.masked, a.oob]) {
      if (s.kind === EMPTY) continue;
      if (s.min < minOffset) minOffset = s.min;
      if (s.max > maxOffset) maxOffset = s.max;
      hasNonElement = true;
    }
  }
  return { minOffset, maxOffset, hasNonElement };
}
