// The pointer over a tensor canvas: which cell it is on (the most important cell under a pixel that
// covers several), the tooltip describing it, the element's value asked of the host while the
// pointer rests there, and a click revealing the source line of the access that hit the cell.

import { revealTarget } from './derive.js';
import { describeCell, formatValue } from './describe.js';
import { pxToCell } from './draw.js';
import { RANK } from './raster.js';
import { isDrawn } from './model.js';
import { state, hover, hoverCell, clearHover } from './store.js';

/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').DrawnTensor} DrawnTensor */
/** @typedef {import('./host.js').Host} Host */
/** @typedef {import('./loader.js').Loader} Loader */

// Values come in aligned blocks, so moving along a row costs one request per block; and only
// once the pointer rests, so sweeping across a map asks for nothing.
const VALUE_BLOCK = 256;
const VALUE_DEBOUNCE_MS = 150;

/**
 * Best (highest-ranked) cell under a viewport point, or -1.
 * @param {DrawnTensor} tm
 * @param {number} clientX
 * @param {number} clientY
 */
export function cellUnder(tm, clientX, clientY) {
  const rect = tm.ui.canvas.getBoundingClientRect();
  const px = (clientX - rect.left) * (tm.ui.canvas.width / rect.width);
  const py = (clientY - rect.top) * (tm.ui.canvas.height / rect.height);
  const rc = pxToCell(tm.geom, px, py);
  if (!rc) return -1;
  const P = tm.layout.P;
  const r1 = Math.min(tm.layout.Rt, rc.row + tm.geom.y.down);
  const c1 = Math.min(P, rc.col + tm.geom.x.down);
  let best = rc.row * P + rc.col;
  let bestRank = RANK[tm.raster.flags[best]];
  for (let r = rc.row; r < r1; r++) {
    for (let c = rc.col; c < c1; c++) {
      const k = RANK[tm.raster.flags[r * P + c]];
      if (k > bestRank) {
        bestRank = k;
        best = r * P + c;
      }
    }
  }
  return best;
}

/**
 * @param {Host} host  (reveal)
 * @param {Loader} loader  (valueBlock)
 * @param {import('./ui.js').Tooltip} tooltip
 */
export function createPointer(host, loader, tooltip) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let valueTimer;

  /**
   * @param {DrawnTensor} tm
   * @param {number} index  flat element index
   */
  function requestValue(tm, index) {
    clearTimeout(valueTimer);
    valueTimer = setTimeout(async () => {
      const start = Math.floor(index / VALUE_BLOCK) * VALUE_BLOCK;
      const count = Math.min(VALUE_BLOCK, tm.layout.numel - start);
      const p = loader.valueBlock(tm, start, count);
      if (!p) return;
      try {
        const r = await p;
        if (hover.tm !== tm || hover.index !== index) return;
        const v = r.values[index - r.start];
        const kept = r.sampled ? ` (kept: 1 in ${r.sampled[0]} rows × 1 in ${r.sampled[1]} columns)` : '';
        tooltip.setLine(
          'tl-tip-value',
          v === null && r.sampled ? `value: not kept${kept}` : `value: ${formatValue(v, tm.meta.dtype)}`,
        );
      } catch (e) {
        if (hover.tm === tm && hover.index === index)
          tooltip.setLine('tl-tip-value', `value: unavailable (${/** @type {Error} */ (e).message})`);
      }
    }, VALUE_DEBOUNCE_MS);
  }

  /** @param {TensorModel} tm */
  function attach(tm) {
    const cv = tm.ui.canvas;
    cv.addEventListener('mousemove', (ev) => {
      if (!isDrawn(tm)) return;
      const cell = cellUnder(tm, ev.clientX, ev.clientY);
      if (cell < 0) {
        tooltip.hide();
        clearHover();
        return;
      }
      if (hover.tm === tm && hover.cell === cell) {
        tooltip.move(ev.clientX, ev.clientY);
        return;
      }
      const d = describeCell(state, tm, cell);
      hoverCell(tm, cell, d.info.kind === 'element' ? d.info.index : -1);
      tooltip.show(d.lines, ev.clientX, ev.clientY);
      if (hover.index >= 0) requestValue(tm, hover.index);
    });
    cv.addEventListener('mouseleave', () => {
      tooltip.hide();
      clearHover();
      clearTimeout(valueTimer);
    });
    cv.addEventListener('click', (ev) => {
      if (!isDrawn(tm)) return;
      const cell = cellUnder(tm, ev.clientX, ev.clientY);
      if (cell < 0) return;
      const d = describeCell(state, tm, cell);
      const site = revealTarget(state, d.hits);
      if (site) host.reveal(site.file, site.line);
    });
  }

  /** A new launch: the old cards and what was under the pointer are gone. */
  function reset() {
    tooltip.hide();
    clearHover();
  }

  return { attach, reset };
}
