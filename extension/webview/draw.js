// Canvas drawing of a rasterised view, downsampled when the view has more cells than pixels:
// a pixel then covers a block of cells and shows the highest-ranked one, so one highlighted
// element in a million is still visible. Pixel composition is a pure function over typed arrays.

import { F_MASK_F, RANK, R_NONE, R_MASK_O, R_OTHER, R_OOB_O, R_MASK_F, R_FOLLOW, R_MULTI, R_OOB_F } from './raster.js';

/** @typedef {import('./raster.js').Raster} Raster */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {number[]} RGBA  [r, g, b, a], each 0..255 */
/** @typedef {ReturnType<typeof axis>} Axis */
/** @typedef {ReturnType<typeof fitGeometry>} Geometry */
/** @typedef {Geometry & {dpr: number}} ViewGeometry  what drawView drew, for hit-testing */
/** @typedef {ReturnType<typeof makePalette>} Palette */

const MAX_CELL_PX = 18; // biggest cell, in CSS pixels
const GAP_MIN_PX = 5; //   cells at least this big get a 1-pixel gap between them
const FLAT_PX = 32; //     a drawing less tall than this (very wide rows) is stretched ...
const MIN_H_PX = 112; //  ... to this height at most (8 rows of 14 px)

/**
 * Pack an [r, g, b, a] colour into the Uint32 layout of ImageData (little-endian RGBA bytes).
 * @param {number} r
 * @param {number} g
 * @param {number} b
 * @param {number} [a]
 */
export function packRGBA(r, g, b, a = 255) {
  return (((a & 255) << 24) | ((b & 255) << 16) | ((g & 255) << 8) | (r & 255)) >>> 0;
}

/**
 * Parse a CSS colour string (#rgb, #rrggbb, rgb(), rgba()) to [r,g,b,a]; null if unknown.
 * @param {string | null | undefined} s
 * @returns {RGBA | null}
 */
export function parseColor(s) {
  s = String(s || '').trim();
  let m = /^#([0-9a-f]{3,8})$/i.exec(s);
  if (m) {
    let h = m[1];
    if (h.length === 3 || h.length === 4)
      h = h
        .split('')
        .map((c) => c + c)
        .join('');
    const v = parseInt(h.slice(0, 6), 16);
    const a = h.length === 8 ? parseInt(h.slice(6, 8), 16) : 255;
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255, a];
  }
  m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+%?))?\s*\)$/i.exec(s);
  if (m) {
    let a = 255;
    if (m[4] !== undefined) a = m[4].endsWith('%') ? parseFloat(m[4]) * 2.55 : parseFloat(m[4]) * 255;
    return [+m[1], +m[2], +m[3], Math.round(a)];
  }
  return null;
}

/**
 * @param {RGBA} c1
 * @param {RGBA} c2
 * @param {number} t  0: c1 .. 1: c2
 * @returns {RGBA}
 */
export function mix(c1, c2, t) {
  return [0, 1, 2, 3].map((i) => Math.round(c1[i] * (1 - t) + c2[i] * t));
}

/**
 * HSL (h in degrees, s/l in 0..1) to [r,g,b,255].
 * @param {number} h
 * @param {number} s
 * @param {number} l
 * @returns {RGBA}
 */
export function hsl(h, s, l) {
  const k = (/** @type {number} */ n) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (/** @type {number} */ n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255), 255];
}

/**
 * Colour of program p (linear id) when several programs are shown: golden-angle hues.
 * @param {number} p
 * @param {boolean} dark
 */
export function programColor(p, dark) {
  // hues 70..330 only: red stays for out-of-bounds lanes, yellow for masked-off ones
  // golden-ratio steps over that range, lightness varied too so neighbours differ
  const dl = [0, -0.1, 0.08][p % 3];
  return hsl(70 + ((140 + p * 160.69) % 260), 0.72, (dark ? 0.6 : 0.45) + dl);
}

/**
 * Choose the pixel size of a view of `cols` x `rows` cells that fits `availW` x `maxH` pixels.
 * Per axis either `up` pixels per cell (>= 1) or `down` cells per pixel (>= 1).
 */
/**
 * @param {number} cols
 * @param {number} rows
 * @param {number} availW
 * @param {number} maxH
 * @param {number} [dpr]
 */
export function fitGeometry(cols, rows, availW, maxH, dpr = 1) {
  const maxCell = MAX_CELL_PX * dpr;
  let sx = Math.min(maxCell, availW / cols);
  let sy = sx;
  if (rows * sy > maxH) sy = maxH / rows;
  // very wide, few rows: a drawing too flat to read (under FLAT_PX) gets taller rows (up to 14 px each,
  // a drawing of MIN_H_PX at most); any other keeps its aspect (1151 x 8192 is drawn wide, not tall)
  if (rows * sy < FLAT_PX * dpr) sy = Math.max(sy, Math.min(14 * dpr, maxH / rows, (MIN_H_PX * dpr) / rows));
  const ax = axis(cols, sx);
  const ay = axis(rows, sy);
  return { cols, rows, x: ax, y: ay, width: ax.px, height: ay.px };
}

/**
 * @param {number} n  cells
 * @param {number} s  pixels per cell
 */
function axis(n, s) {
  if (s >= 1) {
    const up = Math.max(1, Math.floor(s));
    return { up, down: 1, px: n * up, n };
  }
  const down = Math.ceil(1 / s);
  return { up: 1, down, px: Math.ceil(n / down), n };
}

/**
 * Cell range [start[p], end[p]) covered by each pixel p of an axis; gap[p] = 1 on cell borders.
 * @param {Axis} a
 * @param {boolean} gaps
 */
function axisMap(a, gaps) {
  const start = new Int32Array(a.px);
  const end = new Int32Array(a.px);
  const gap = new Uint8Array(a.px);
  for (let p = 0; p < a.px; p++) {
    if (a.up > 1) {
      const c = Math.floor(p / a.up);
      start[p] = c;
      end[p] = c + 1;
      if (gaps && p % a.up === a.up - 1) gap[p] = 1;
    } else {
      start[p] = p * a.down;
      end[p] = Math.min(a.n, (p + 1) * a.down);
    }
  }
  return { start, end, gap };
}

/**
 * Compose the view's pixels.
 * @param {Uint32Array} dst  width * height (ImageData buffer)
 * @param {Geometry} geom
 * @param {Pick<Raster, 'flags' | 'prog'>} raster
 * @param {{Bt: number, R: number, C: number, tailCell: number}} shape  where the element grid is:
 *                 rows [Bt, Bt + R), columns [0, C), cells before tailCell (a wrapped 1-D
 *                 tensor's last row ends early)
 * @param {Palette} pal  packed colours (see makePalette)
 * @param {boolean} byProgram  colour followed cells by program
 * @param {Uint32Array | null} [vcol]  optional per-cell packed colours (values view, 0 = none):
 *                 element cells that are untouched or touched (not masked / out of bounds) take them
 */
export function composePixels(dst, geom, raster, shape, pal, byProgram, vcol = null) {
  const { flags, prog } = raster;
  const gaps = geom.x.up >= GAP_MIN_PX && geom.y.up >= GAP_MIN_PX;
  const X = axisMap(geom.x, gaps);
  const Y = axisMap(geom.y, gaps);
  const W = geom.width;
  const P = geom.cols;
  const { Bt, R, C, tailCell } = shape; // tailCell: first cell index (row-major) that is past a 1-D end
  const rankCol = new Uint32Array(8);
  rankCol[R_MASK_O] = pal.maskO;
  rankCol[R_OTHER] = pal.other;
  rankCol[R_OOB_O] = pal.oobO;
  rankCol[R_FOLLOW] = pal.follow;
  rankCol[R_MULTI] = pal.follow;
  rankCol[R_OOB_F] = pal.oobF;
  const progCols = pal.progCols;
  const nProg = progCols.length;
  const ux = geom.x.up;
  const uy = geom.y.up;
  const markMasked = ux >= 8 && uy >= 8;
  const cornerPx = Math.floor(Math.min(ux, uy) / 2);

  for (let py = 0; py < geom.height; py++) {
    const r0 = Y.start[py];
    const r1 = Y.end[py];
    const rowGap = Y.gap[py];
    const base = py * W;
    // Is this pixel row entirely outside the element grid (a band)?
    const rowIsGrid = r1 > Bt && r0 < Bt + R;
    for (let px = 0; px < W; px++) {
      const c0 = X.start[px];
      const c1 = X.end[px];
      if (rowGap || X.gap[px]) {
        dst[base + px] = pal.gap;
        continue;
      }
      let best = 0;
      let bestCell = -1;
      for (let r = r0; r < r1; r++) {
        let cell = r * P + c0;
        const cend = r * P + c1;
        for (; cell < cend; cell++) {
          const k = RANK[flags[cell]];
          if (k > best) {
            best = k;
            bestCell = cell;
          }
        }
      }
      let col;
      // A touched cell that is also the address of a masked-off lane of the followed line gets
      // a hatched corner (visible only when cells are big enough).
      if (
        markMasked &&
        best !== R_MASK_F &&
        best !== R_NONE &&
        flags[bestCell] & F_MASK_F &&
        (px % ux) + (py % uy) < cornerPx &&
        ((px + py) & 1) === 0
      ) {
        dst[base + px] = pal.maskF;
        continue;
      }
      if (
        vcol &&
        (best === R_NONE || best === R_OTHER || best === R_FOLLOW || best === R_MULTI) &&
        vcol[best === R_NONE ? r0 * P + c0 : bestCell]
      ) {
        col = vcol[best === R_NONE ? r0 * P + c0 : bestCell];
      } else if (best === R_NONE) {
        // background: element, or band / padding / 1-D tail
        const element = rowIsGrid && c0 < C && r0 * P + c0 < tailCell;
        if (element) col = pal.elem;
        else col = ((px + py) & 7) < 2 ? pal.bandStripe : pal.band;
      } else if (best === R_MASK_F || best === R_MASK_O) {
        const stripe = ((px + py) & 3) < 2;
        col = best === R_MASK_F ? (stripe ? pal.maskF : pal.maskF2) : stripe ? pal.maskO : pal.maskO2;
      } else if ((best === R_FOLLOW || best === R_MULTI) && byProgram) {
        const p = prog[bestCell];
        col = p >= 0 ? progCols[p % nProg] : pal.follow;
        if (best === R_MULTI && ((px - py) & 3) === 0) col = pal.multi;
      } else if (best === R_MULTI) {
        col = ((px - py) & 3) === 0 ? pal.multi : pal.follow;
      } else {
        col = rankCol[best];
      }
      dst[base + px] = col;
    }
  }
}

/**
 * Read the theme's colours (CSS custom properties on body) into packed colours.
 * @param {{getPropertyValue(name: string): string}} style
 * @param {string} followKind
 * @param {number} nPrograms
 * @param {boolean} dark
 */
export function makePalette(style, followKind, nPrograms, dark) {
  // the fallbacks are valid colours: get() never answers null
  const get = (/** @type {string} */ name, /** @type {string} */ fallback) =>
    /** @type {RGBA} */ (parseColor(style.getPropertyValue(name)) || parseColor(fallback));
  const bg = get('--tl-map-bg', '#1e1e1e');
  const follow = get(`--tl-follow-${followKind}`, followKind === 'store' ? '#e8912d' : '#3794ff');
  const other = get('--tl-other', '#6b7280');
  const mask = get('--tl-masked', '#c8a200');
  const oob = get('--tl-oob', '#f14c4c');
  const elem = get('--tl-elem', '#2d2d30');
  const band = get('--tl-band', '#3a2326');
  const multi = get('--tl-multi', '#ffffff');
  const pk = (/** @type {RGBA} */ c) => packRGBA(c[0], c[1], c[2], c[3]);
  const progCols = new Uint32Array(Math.max(1, Math.min(nPrograms, 4096)));
  for (let p = 0; p < progCols.length; p++) progCols[p] = pk(programColor(p, dark));
  return {
    gap: pk(bg),
    elem: pk(elem),
    band: pk(band),
    bandStripe: pk(mix(band, bg, 0.5)),
    follow: pk(follow),
    other: pk(other),
    maskF: pk(mask),
    maskF2: pk(mix(mask, elem, 0.55)),
    maskO: pk(mix(mask, elem, 0.55)),
    maskO2: pk(mix(mask, elem, 0.8)),
    oobF: pk(oob),
    oobO: pk(mix(oob, elem, 0.55)),
    multi: pk(multi),
    progCols,
    css: { follow, other, mask, oob, elem, band, multi, bg },
  };
}

/**
 * Draw a rasterised view onto a canvas. Returns the geometry used (for hit-testing).
 * @param {HTMLCanvasElement} canvas
 * @param {Layout} layout
 * @param {Raster} raster
 * @param {Palette} pal
 * @param {boolean} byProgram
 * @param {number} availCssW
 * @param {number} maxCssH
 * @param {Uint32Array | null} [vcol]
 * @returns {ViewGeometry}
 */
export function drawView(canvas, layout, raster, pal, byProgram, availCssW, maxCssH, vcol = null) {
  const dpr = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
  const geom = fitGeometry(layout.P, layout.Rt, Math.max(40, availCssW) * dpr, Math.max(40, maxCssH) * dpr, dpr);
  if (canvas.width !== geom.width) canvas.width = geom.width;
  if (canvas.height !== geom.height) canvas.height = geom.height;
  canvas.style.width = `${geom.width / dpr}px`;
  canvas.style.height = `${geom.height / dpr}px`;
  const ctx = context2d(canvas);
  const img = ctx.createImageData(geom.width, geom.height);
  const dst = new Uint32Array(img.data.buffer);
  const tailCell = layout.is1D
    ? layout.Bt * layout.P + (layout.numel - (layout.R - 1) * layout.C) + (layout.R - 1) * layout.P
    : Infinity;
  composePixels(dst, geom, raster, { Bt: layout.Bt, R: layout.R, C: layout.C, tailCell }, pal, byProgram, vcol);
  ctx.putImageData(img, 0, 0);
  // The tensor's edge: a line around the element grid when bands are shown.
  const tailCol = layout.is1D ? layout.numel - (layout.R - 1) * layout.C : layout.C;
  if (layout.Bt || layout.Bb || layout.Br || tailCol < layout.C) {
    const x0 = 0;
    const y0 = cellToPx(geom.y, layout.Bt);
    const x1 = cellToPx(geom.x, layout.C);
    const y1 = cellToPx(geom.y, layout.Bt + layout.R);
    ctx.strokeStyle = `rgb(${pal.css.oob.slice(0, 3).join(',')})`;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    ctx.setLineDash([4 * dpr, 3 * dpr]);
    ctx.beginPath();
    if (layout.Bt) {
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y0);
    }
    if (tailCol < layout.C) {
      // the end of a wrapped 1-D tensor: a step around the unused tail of the last row
      const xt = cellToPx(geom.x, tailCol);
      const yt = cellToPx(geom.y, layout.Bt + layout.R - 1);
      ctx.moveTo(x0, y1);
      ctx.lineTo(xt, y1);
      ctx.lineTo(xt, yt);
      ctx.lineTo(x1, yt);
      if (layout.Bb) {
        ctx.moveTo(xt, y1);
        ctx.lineTo(x1, y1);
      }
    } else if (layout.Bb) {
      ctx.moveTo(x0, y1);
      ctx.lineTo(x1, y1);
    }
    if (layout.Br) {
      ctx.moveTo(x1, y0);
      ctx.lineTo(x1, y1);
    }
    ctx.stroke();
    ctx.setLineDash([]);
  }
  return { ...geom, dpr };
}

/**
 * A canvas's 2-D context. Only a canvas already given another kind of context has none.
 * @param {HTMLCanvasElement} canvas
 */
export function context2d(canvas) {
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('canvas: no 2-D context');
  return ctx;
}

/**
 * @param {Axis} a
 * @param {number} c
 */
export function cellToPx(a, c) {
  return a.up > 1 ? c * a.up : Math.round(c / a.down);
}

/**
 * Cell (row, col) under a canvas pixel, or null.
 * @param {Geometry} geom
 * @param {number} px
 * @param {number} py
 */
export function pxToCell(geom, px, py) {
  const col = geom.x.up > 1 ? Math.floor(px / geom.x.up) : Math.floor(px) * geom.x.down;
  const row = geom.y.up > 1 ? Math.floor(py / geom.y.up) : Math.floor(py) * geom.y.down;
  if (col < 0 || row < 0 || col >= geom.cols || row >= geom.rows) return null;
  return { row, col };
}
