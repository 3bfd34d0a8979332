// Geometry of one tensor map: which cell shows which element, and where the lanes that hit no
// element (out-of-bounds or masked addresses past the tensor's edge, or in its padding) are drawn.
//
// A map is a grid of R x C element cells (2-D: the tensor; 1-D: wrapped into rows of `wrap`;
// N-D: the last two dims, for one choice of the leading indices = a "slice"), surrounded by bands:
//   Bt rows above   -- addresses before the tensor's first element (negative offsets)
//   Bb rows below   -- addresses past its end, continuing the row layout
//   Br cols right   -- addresses in the padding between rows of a strided view
// Cells are numbered row-major over (Bt + R + Bb) rows of pitch P = C + Br.
//
// Offsets (element units from the tensor's first element, as in `masked`/`oob`) are placed with
// the tensor's strides. "Nested" strides (row-major with optional padding: stride[k-1] >=
// stride[k] * shape[k]) have an exact placement; any other layout (transposed views, ...) places
// only in-bounds offsets, via a lookup table, and puts the rest after the end in flat order.

export const PLACE_NONE = -1; // cannot be shown in this view (other slice, beyond the band caps)

/**
 * Offsets reached by a tensor's masked/oob sets: the bands are sized from it.
 * @typedef {{minOffset: number, maxOffset: number, hasNonElement: boolean}} Extent
 */
/**
 * What a cell shows: an element, an address outside the tensor (a band, or the tail of a wrapped
 * 1-D tensor's last row), or nothing the placement can reach.
 * @typedef {{kind: 'element', index: number, offset: number, row: number, col: number}} ElementCell
 * @typedef {{kind: 'band' | 'tail', row: number, col: number, offset: number, where: 'before' | 'past' | 'padding'}} OutsideCell
 * @typedef {{kind: 'none'}} NoCell
 * @typedef {ElementCell | OutsideCell | NoCell} CellInfo
 */
/** @typedef {ReturnType<typeof makeLayout>} Layout */

/** @param {number[]} shape */
export function numelOf(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Row width used for a 1-D tensor: one row up to 128 elements, else about 4:1 wide, a power of two.
 * @param {number} numel
 */
export function defaultWrap(numel) {
  if (numel <= 128) return Math.max(1, numel);
  const w = 2 ** Math.round(Math.log2(Math.sqrt(numel * 4)));
  return Math.max(16, Math.min(1024, w));
}

/** @param {number[]} shape */
function contiguousStrides(shape) {
  /** @type {number[]} */
  const st = new Array(shape.length);
  let acc = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    st[k] = acc;
    acc *= shape[k];
  }
  return st;
}

/**
 * @param {{shape?: number[], strides?: number[]}} tensor
 * @param {{wrap?: number, slice?: number}} [view]  slice = linear index over the leading dims (N-D)
 * @param {Extent | null} [extent]  over every masked/oob set of the tensor
 */
export function makeLayout(tensor, view = {}, extent = null) {
  let shape = (tensor.shape || []).map(Number);
  if (shape.length === 0) shape = [1];
  let strides =
    tensor.strides && tensor.strides.length === shape.length ? tensor.strides.map(Number) : contiguousStrides(shape);
  const numel = numelOf(shape);
  const nd = shape.length;
  const is1D = nd === 1;

  // Strides of size-1 dims are arbitrary: normalise them so they do not break nesting.
  strides = strides.slice();
  for (let k = nd - 1; k >= 0; k--) {
    if (shape[k] === 1) strides[k] = k === nd - 1 ? 1 : strides[k + 1] * shape[k + 1];
  }
  let nested = strides[nd - 1] >= 1;
  for (let k = nd - 1; k >= 1 && nested; k--) nested = strides[k - 1] >= strides[k] * shape[k];
  let contiguous = nested;
  const cs = contiguousStrides(shape);
  for (let k = 0; k < nd && contiguous; k++) contiguous = strides[k] === cs[k];

  // Element offsets reachable by the strides.
  let maxElemOffset = 0;
  let minElemOffset = 0;
  for (let k = 0; k < nd; k++) {
    const span = (shape[k] - 1) * strides[k];
    if (span > 0) maxElemOffset += span;
    else minElemOffset += span;
  }
  if (numel === 0) maxElemOffset = -1;

  // Grid.
  /** @type {number} */ let C;
  /** @type {number} */ let R;
  /** @type {number} */ let nSlices;
  if (is1D) {
    C = Math.max(1, Math.floor(view.wrap || defaultWrap(numel)));
    R = Math.max(1, Math.ceil(numel / C));
    nSlices = 1;
  } else {
    C = shape[nd - 1];
    R = shape[nd - 2];
    nSlices = numel / Math.max(1, R * C);
  }
  const slice = Math.max(0, Math.min(nSlices - 1, Math.floor(view.slice || 0)));
  const viewLo = is1D ? 0 : slice * R * C;
  const viewHi = is1D ? numel : viewLo + R * C;
  const T = is1D ? R : numel / Math.max(1, C); // rows of the whole tensor, in row units

  // ---- placement of offsets into virtual (row, col); row relative to the view's first grid row.
  // Returns row = NaN when it cannot be placed at all (padding of a leading dim, between elements).
  /** @type {Int32Array | null} */
  let lookup = null; // non-nested: offset - minElemOffset -> flat index, or -1
  function buildLookup() {
    const span = maxElemOffset - minElemOffset + 1;
    if (span > 32 * 1024 * 1024) return null;
    const lu = new Int32Array(span).fill(-1);
    const idx = new Array(nd).fill(0);
    let off = 0;
    for (let flat = 0; flat < numel; flat++) {
      lu[off - minElemOffset] = flat;
      for (let k = nd - 1; k >= 0; k--) {
        idx[k]++;
        off += strides[k];
        if (idx[k] < shape[k]) break;
        off -= strides[k] * shape[k];
        idx[k] = 0;
      }
    }
    return lu;
  }

  const out = { row: 0, col: 0, index: -1, where: '' };
  // where: 'element' (index set), 'before', 'past', 'padding', 'other-slice'
  /** @param {number} o */
  function placeVirtual(o) {
    out.index = -1;
    if (contiguous) {
      if (o >= 0 && o < numel) {
        out.index = o;
        out.where = 'element';
      } else out.where = o < 0 ? 'before' : 'past';
      flatToRC(o);
      return out;
    }
    if (!nested) {
      if (o >= minElemOffset && o <= maxElemOffset) {
        if (lookup === null) lookup = buildLookup() || new Int32Array(0);
        const f = lookup.length ? lookup[o - minElemOffset] : -1;
        if (f >= 0) {
          out.index = f;
          out.where = 'element';
          flatToRC(f);
          return out;
        }
        out.where = 'padding';
        out.row = NaN;
        return out;
      }
      const v = o > maxElemOffset ? numel + (o - maxElemOffset - 1) : o - minElemOffset;
      out.where = o > maxElemOffset ? 'past' : 'before';
      flatToRC(v);
      return out;
    }
    // Nested: decompose o = sum q_k * stride_k (+ rem), q_0 unbounded.
    const q0 = Math.floor(o / strides[0]);
    let rem = o - q0 * strides[0];
    let g = q0; // global row index (over leading dims and the row dim), built below
    let col = 0;
    let pad = false;
    let lost = false;
    if (is1D) {
      if (rem !== 0) lost = true;
      out.where = q0 < 0 ? 'before' : q0 >= numel ? 'past' : 'element';
      if (out.where === 'element' && !lost) out.index = q0;
      if (lost) {
        out.where = 'padding';
        out.row = NaN;
        return out;
      }
      flatToRC(q0);
      return out;
    }
    for (let k = 1; k < nd; k++) {
      const q = Math.floor(rem / strides[k]);
      rem -= q * strides[k];
      if (k === nd - 1) {
        col = q;
        if (q >= shape[k]) pad = true;
      } else {
        if (q >= shape[k]) lost = true;
        g = g * shape[k] + q;
      }
    }
    if (rem !== 0 || lost) {
      out.where = 'padding';
      out.row = NaN;
      return out;
    }
    out.col = col;
    if (g < 0) out.where = 'before';
    else if (g >= T) out.where = 'past';
    else if (pad) out.where = 'padding';
    else {
      out.where = 'element';
      out.index = g * C + col;
    }
    if (g >= 0 && g < T) {
      const s = Math.floor(g / R);
      if (s !== slice) {
        out.where = out.where === 'element' ? out.where : 'other-slice';
        out.row = NaN;
        return out;
      }
      out.row = g - s * R;
    } else if (g >= T) out.row = R + (g - T);
    else out.row = g; // negative: rows above
    return out;
  }
  /** @param {number} v */
  function flatToRC(v) {
    // v: flat position in row-major order (may be < 0 or >= numel)
    const gr = Math.floor(v / C);
    out.col = v - gr * C;
    if (is1D) {
      out.row = gr;
      return;
    }
    if (gr < 0) out.row = gr;
    else if (gr >= T) out.row = R + (gr - T);
    else {
      const s = Math.floor(gr / R);
      out.row = s === slice ? gr - s * R : NaN;
      if (s !== slice && out.where !== 'element') out.where = 'other-slice';
    }
  }

  // ---- bands, sized from the data's extent (stable across program/line selection)
  let Bt = 0,
    Bb = 0,
    Br = 0;
  const capRows = Math.max(2, Math.min(64, Math.ceil(R / 4)));
  if (extent && extent.maxOffset >= extent.minOffset) {
    const hi = placeVirtual(extent.maxOffset);
    if (hi.row >= R) Bb = Math.min(capRows, hi.row - R + 1);
    const lo = placeVirtual(extent.minOffset);
    if (lo.row < 0) Bt = Math.min(capRows, -lo.row);
    if (nested && !is1D && extent.hasNonElement) {
      const padCols = Math.floor(strides[nd - 2] / strides[nd - 1]) - C;
      if (padCols > 0) Br = Math.min(padCols, Math.max(64, Math.ceil(C / 4)));
    }
  }
  const P = C + Br;
  const Rt = Bt + R + Bb;

  /**
   * Cell of flat element index i in this view, or -1.
   * @param {number} i
   */
  function indexToCell(i) {
    if (i < viewLo || i >= viewHi) return -1;
    const v = i - viewLo;
    const r = Math.floor(v / C);
    return (r + Bt) * P + (v - r * C);
  }

  /**
   * Place an offset: returns {cell, index, where}; cell = -1 when not drawable here.
   * @param {number} o
   */
  function placeOffset(o) {
    const p = placeVirtual(o);
    if (p.index >= 0) return { cell: indexToCell(p.index), index: p.index, where: 'element' };
    const r = p.row;
    if (!(r === r) || p.col < 0 || p.col >= P || r < -Bt || r >= R + Bb) {
      return { cell: PLACE_NONE, index: -1, where: p.where };
    }
    return { cell: (r + Bt) * P + p.col, index: -1, where: p.where };
  }

  /**
   * Fast path for rasterising: cell of offset o, or -1. (no allocation)
   * @param {number} o
   */
  function offsetCell(o) {
    const p = placeVirtual(o);
    if (p.index >= 0) return indexToCell(p.index);
    const r = p.row;
    if (!(r === r) || p.col < 0 || p.col >= P || r < -Bt || r >= R + Bb) return PLACE_NONE;
    return (r + Bt) * P + p.col;
  }

  /**
   * Unravel a flat index into per-dim indices.
   * @param {number} i
   */
  function unravel(i) {
    /** @type {number[]} */
    const idx = new Array(nd);
    for (let k = nd - 1; k >= 0; k--) {
      idx[k] = i % shape[k];
      i = Math.floor(i / shape[k]);
    }
    return idx;
  }
  /** @param {number} i */
  function offsetOfIndex(i) {
    const idx = unravel(i);
    let o = 0;
    for (let k = 0; k < nd; k++) o += idx[k] * strides[k];
    return o;
  }

  /**
   * What a cell shows: {kind: 'element', index, offset} | {kind: 'band'|'tail', offset, where}
   * | {kind: 'none'} (an empty cell the placement can never reach).
   * @param {number} cell
   * @returns {CellInfo}
   */
  function cellInfo(cell) {
    const r = Math.floor(cell / P) - Bt;
    const c = cell - (r + Bt) * P;
    if (r >= 0 && r < R && c < C) {
      const i = viewLo + r * C + c;
      if (i < viewHi) return { kind: 'element', index: i, offset: offsetOfIndex(i), row: r, col: c };
      // 1-D tail of the last row: continues past the end
      return withOffset({ kind: 'tail', row: r, col: c }, r, c);
    }
    return withOffset({ kind: 'band', row: r, col: c }, r, c);
  }
  /**
   * @param {{kind: 'band' | 'tail', row: number, col: number}} cell
   * @param {number} r
   * @param {number} c
   * @returns {OutsideCell | NoCell}
   */
  function withOffset(cell, r, c) {
    const info = /** @type {OutsideCell} */ (cell);
    /** @type {number} */
    let o;
    if (is1D) {
      const v = r * C + c;
      o = contiguous || nested ? v * strides[0] : v >= numel ? maxElemOffset + 1 + (v - numel) : minElemOffset + v;
    } else if (nested) {
      let g;
      if (r < 0) g = r;
      else if (r >= R) g = T + (r - R);
      else g = slice * R + r;
      // decompose g into leading-dim indices, q0 unbounded
      let rest = g;
      o = c * strides[nd - 1];
      for (let k = nd - 2; k >= 1; k--) {
        const q = ((rest % shape[k]) + shape[k]) % shape[k];
        o += q * strides[k];
        rest = (rest - q) / shape[k];
      }
      o += rest * strides[0];
    } else {
      let v;
      if (r < 0) v = r * C + c;
      else v = (r >= R ? T + (r - R) : slice * R + r) * C + c;
      if (c >= C) return { kind: 'none' };
      o = v >= numel ? maxElemOffset + 1 + (v - numel) : v < 0 ? minElemOffset + v : NaN;
    }
    info.offset = o;
    info.where = o < minElemOffset ? 'before' : o > maxElemOffset ? 'past' : 'padding';
    return info;
  }

  return {
    shape,
    strides,
    numel,
    nd,
    is1D,
    nested,
    contiguous,
    R,
    C,
    Bt,
    Bb,
    Br,
    P,
    Rt,
    T,
    nSlices,
    slice,
    viewLo,
    viewHi,
    minElemOffset,
    maxElemOffset,
    capRows,
    indexToCell,
    placeOffset,
    offsetCell,
    cellInfo,
    unravel,
    offsetOfIndex,
  };
}
