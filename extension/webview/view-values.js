// View of the Values mode in a tensor card: the colour scale, the downsampling note and the
// histogram of the followed line's elements. The value map itself comes from the loader.

import { fmtNum } from './describe.js';
import { placesOf } from './derive.js';
import { el, placeName } from './ui.js';
import { histogramFor, drawHistogram, isValueMap, isSampled } from './values.js';

/** @typedef {import('./values.js').ValueMap} ValueMap */
/** @typedef {import('./values.js').NoValueMap} NoValueMap */

/**
 * Fill the card's values box for value map `vm` (null: Values off; undefined: still loading).
 * Returns the map the canvas is coloured with, or null when it is drawn as accesses.
 * @param {import('./store.js').State} state
 * @param {import('./model.js').TensorModel} tm
 * @param {ValueMap | NoValueMap | null | undefined} vm
 * @returns {ValueMap | null}
 */
export function renderValues(state, tm, vm) {
  const box = tm.ui.values;
  if (!box) return isValueMap(vm) ? vm : null; // a slice of an N-D tensor: its card shows the values line
  if (state.values === 'off') {
    box.hidden = true;
    return null;
  }
  box.hidden = false;
  const when = state.values === 'before' ? 'before the launch' : 'after the launch';
  if (vm === undefined) {
    box.replaceChildren(el('div', 'tl-note', `values ${when}: loading…`));
    return null;
  }
  // Values are on (state.values is not 'off'): the loader answered a map or why there is none.
  const got = /** @type {ValueMap | NoValueMap} */ (vm);
  if (!isValueMap(got)) {
    box.replaceChildren(el('div', 'tl-note', `values ${when}: not available (${got.none})`));
    return null;
  }
  /** @type {HTMLElement[]} */
  const parts = [
    el(
      'div',
      'tl-values-scale',
      `values ${when}: colour from ${fmtNum(got.lo)} (dark) to ${fmtNum(got.hi)} (bright); ` +
        'cells the followed line did not touch are dimmed',
    ),
  ];
  const sampled = isSampled(got);
  if (sampled) {
    parts.push(
      el(
        'div',
        'tl-note tl-sampled',
        `values: 1 in ${got.rowsStep} rows × 1 in ${got.colsStep} columns ` +
          `(${got.sampled.toLocaleString()} of ${got.numel.toLocaleString()} elements kept: the tensor is over the 1M-element value limit)` +
          (got.block > 1 ? `; each colour is the mean of ${got.block} neighbouring kept elements` : '') +
          '; the tooltip shows exact values of the kept elements',
      ),
    );
  } else if (got.block > 1) {
    parts.push(
      el(
        'div',
        'tl-note tl-downsampled',
        `downsampled: each colour is the mean of ${got.block} neighbouring elements ` +
          `(${got.numel.toLocaleString()} elements, ${got.q.length.toLocaleString()} colours sent); the tooltip shows exact values`,
      ),
    );
  }
  const h = histogramFor(got, state.follow);
  if (h) {
    const cv = el('canvas', 'tl-histogram');
    const line = placeName(placesOf(state), h.file, h.line, false);
    parts.push(
      el(
        'div',
        'tl-histogram-title',
        (sampled && h.touched !== undefined
          ? `histogram of the ${h.elements.toLocaleString()} kept elements (1 in ${got.rowsStep * got.colsStep}) ` +
            `of the ${h.touched.toLocaleString()} elements ${line} touched `
          : `histogram of the ${h.elements.toLocaleString()} elements ${line} touched `) +
          `(all programs): ${fmtNum(h.lo)} … ${fmtNum(h.hi)}${h.nonfinite ? `, ${h.nonfinite} NaN/inf` : ''}`,
      ),
      cv,
    );
    box.replaceChildren(...parts);
    drawHistogram(cv, h, getComputedStyle(document.body).color || '#888');
    tm.ui.histogram = { canvas: cv, hist: h };
  } else {
    parts.push(el('div', 'tl-note', 'histogram: the followed line does not access this tensor'));
    box.replaceChildren(...parts);
    tm.ui.histogram = null;
  }
  return got;
}
