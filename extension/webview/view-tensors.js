// View of the tensor cards: one card per tensor argument with its view controls and canvas; an
// N-D tensor gets a grid of 2-D slices, each a sub-model with its own canvas. Rendering a tensor
// rasterises its accesses for the state's followed line, programs and iteration and draws them.
// The layout, raster and geometry it computes are kept on the tensor model: hit-testing (pointer.js)
// and the test hook read them until the next render.

import { MAX_SLICES, byProgram, followKindOf, followTest, sliceSpec } from './derive.js';
import { cardText, sliceLabel, sliceNote } from './describe.js';
import { drawView } from './draw.js';
import { makeLayout } from './layout.js';
import { accessesAtIteration } from './model.js';
import { rasterize } from './raster.js';
import { state, countRender } from './store.js';
import { paletteFor } from './theme.js';
import { el, buildTensorCard, numberInput } from './ui.js';
import { valueColors } from './values.js';
import { renderValues } from './view-values.js';

/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./store.js').SavedView} SavedView */

/**
 * @param {HTMLElement} maps  the cards' container
 * @param {object} deps
 * @param {(tm: TensorModel) => void} deps.attachPointer  hover and click on a canvas
 * @param {import('./loader.js').Loader['valueMap']} deps.valueMap  the loader's (undefined while it loads)
 * @param {(tm: TensorModel, width: number) => void} deps.onWrap  the user changed a 1-D row width
 * @param {(tm: TensorModel, patch: SavedView) => void} deps.onSliceView  ... which N-D slices are shown
 */
export function createTensorsView(maps, { attachPointer, valueMap, onWrap, onSliceView }) {
  const valuesOf = (/** @type {TensorModel} */ tm) => (state.values === 'off' ? null : valueMap(tm, state.values));

  /** @param {import('./store.js').LaunchModel} L */
  function build(L) {
    maps.replaceChildren();
    for (const tm of L.tensors) {
      const card = buildTensorCard({
        index: tm.index,
        name: tm.name,
        dtype: tm.meta.dtype,
        shape: tm.meta.shape,
        strides: tm.meta.strides,
      });
      const values = el('div', 'tl-values-box');
      values.hidden = true;
      card.card.append(values);
      tm.ui = { ...card, values };
      maps.append(tm.ui.card);
      if (tm.error) {
        tm.ui.status.textContent = `no access map: ${tm.error}`;
        tm.ui.status.classList.add('error');
        continue;
      }
      buildViewControls(tm);
      if ((tm.meta.shape || []).length > 2) buildSlices(tm);
      else attachPointer(tm);
    }
    if (!L.tensors.length)
      maps.append(el('p', 'tl-note', 'This launch has no tensor arguments with recorded accesses.'));
  }

  /** @param {TensorModel} tm */
  function buildViewControls(tm) {
    const shape = tm.meta.shape || [];
    const controls = /** @type {HTMLElement} */ (tm.ui.controls); // a tensor card's (a slice has none)
    controls.replaceChildren();
    if (shape.length === 1) {
      const wrap = /** @type {number} */ (tm.view.wrap); // viewFor gives every 1-D tensor one
      controls.append(numberInput('row width', wrap, 1, Math.max(1, shape[0]), (v) => onWrap(tm, v)));
    } else if (shape.length > 2) {
      buildSliceControls(tm);
    }
  }

  /** @param {TensorModel} tm */
  function buildSliceControls(tm) {
    const sp = sliceSpec(state, tm);
    const c = /** @type {HTMLElement} */ (tm.ui.controls);
    c.append(el('span', 'tl-slice-label', 'outer dims'));
    sp.outer.forEach((v, k) => {
      c.append(
        numberInput(`dim ${k}`, v, 0, sp.lead[k] - 1, (x) => {
          const outer = sliceSpec(state, tm).outer.slice();
          outer[k] = x;
          onSliceView(tm, { outer });
        }),
      );
    });
    if (sp.inner > MAX_SLICES) {
      c.append(
        numberInput(`dim ${sp.lead.length - 1} from`, sp.first, 0, sp.inner - 1, (x) => onSliceView(tm, { first: x })),
      );
    }
  }

  /**
   * One sub-model per shown slice: same accesses, its own view, canvas and hit-testing.
   * @param {TensorModel} tm
   */
  function buildSlices(tm) {
    const sp = sliceSpec(state, tm);
    tm.ui.wrap.hidden = true;
    if (!tm.ui.slices) {
      tm.ui.slices = el('div', 'tl-slices');
      tm.ui.wrap.after(tm.ui.slices);
    }
    tm.ui.slices.replaceChildren();
    tm.slices = [];
    for (let h = sp.first; h < sp.first + sp.count; h++) {
      const idx = sp.outer.concat([h]);
      const card = el('div', 'tl-slice-card');
      const title = el('div', 'tl-slice-title', sliceLabel(tm, idx));
      const wrap = el('div', 'tl-canvas-wrap');
      const canvas = el('canvas', 'tl-canvas');
      wrap.append(canvas);
      const status = el('div', 'tl-card-status');
      const oob = el('div', 'tl-oob');
      card.append(title, wrap, status, oob);
      tm.ui.slices.append(card);
      const sub = {
        index: tm.index,
        name: tm.name,
        meta: tm.meta,
        sites: tm.sites,
        accesses: tm.accesses,
        extent: tm.extent,
        valueCache: tm.valueCache,
        valueMaps: tm.valueMaps,
        parent: tm,
        sliceIndex: idx,
        view: { slice: sp.base + h },
        ui: { card, canvas, wrap, status, oob, values: null },
      };
      tm.slices.push(sub);
      attachPointer(sub);
    }
    tm.ui.sliceNote = tm.ui.sliceNote || el('div', 'tl-card-status');
    tm.ui.slices.after(tm.ui.sliceNote);
    tm.ui.sliceNote.textContent = sliceNote(tm, sp, MAX_SLICES);
  }

  /** @param {TensorModel} tm */
  function rebuildSlices(tm) {
    buildSlices(tm);
    render(tm);
    countRender();
  }

  /** @param {TensorModel} tm */
  function render(tm) {
    if (tm.error) return;
    if (tm.slices) {
      const t0 = performance.now();
      renderValues(state, tm, valuesOf(tm)); // the card's values line and histogram (all slices share them)
      for (const sub of tm.slices) render(sub);
      tm.raster = tm.slices.length ? tm.slices[0].raster : null;
      tm.followKind = tm.slices.length ? tm.slices[0].followKind : 'load';
      tm.renderMs = performance.now() - t0;
      tm.ui.status.textContent = '';
      return;
    }
    const t0 = performance.now();
    if (!tm.layout) tm.layout = makeLayout(tm.meta, tm.view, tm.extent);
    const sel = state.programs;
    const isFollowed = followTest(state);
    // Site ids are small integers: a byte per id makes the raster's per-access test a lookup.
    const followed = new Uint8Array(
      Math.max(0, ...Array.from(tm.sites.keys()).map(Number).filter(Number.isFinite)) + 1,
    );
    for (const s of tm.sites.values()) if (isFollowed(s) && s.id >= 0 && s.id < followed.length) followed[s.id] = 1;
    const accesses = accessesAtIteration(tm, state.iteration, isFollowed);
    tm.raster = rasterize(
      tm.layout,
      accesses,
      (id) => followed[id] === 1,
      sel === null ? () => true : (p) => sel.has(p),
    );
    tm.followKind = followKindOf(state, tm);
    const pal = paletteFor(state, tm.followKind);
    const wrapW = tm.ui.wrap.clientWidth || 800;
    const maxH = tm.parent ? 280 : Math.max(160, Math.min(900, Math.round(window.innerHeight * 0.7)));
    const vm = renderValues(state, tm, valuesOf(tm));
    const vcol = vm ? valueColors(tm.layout, vm, tm.raster.flags, pal.css.elem) : null;
    tm.geom = drawView(tm.ui.canvas, tm.layout, tm.raster, pal, byProgram(state) && !vcol, wrapW, maxH, vcol);
    tm.renderMs = performance.now() - t0;
    const text = cardText(state, tm.raster.counts, tm.layout, tm.geom);
    tm.ui.status.textContent = text.status;
    tm.ui.oob.textContent = text.oob || '';
    tm.ui.oob.hidden = !text.oob;
  }

  return {
    build,
    render,
    rebuildSlices,
    clear() {
      maps.replaceChildren();
    },
  };
}
