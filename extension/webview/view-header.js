// View of the page's top: the kernel, launch and line pickers, the followed line, the programs row,
// the legend and the message line. Reads the store, writes these elements; user input goes to the
// controller's callbacks.

import { byProgram, placesOf } from './derive.js';
import { headerText, kernelLabel, launchLabel, legendItems, lineLabel } from './describe.js';
import { programColor } from './draw.js';
import { state } from './store.js';
import { cssColor, isDark } from './theme.js';
import { buildLegend, buildProgramGrid, fillSelect, updateProgramGrid } from './ui.js';

/** @typedef {import('./store.js').Kernel} Kernel */
/** @typedef {import('./store.js').Launch} Launch */
/** @typedef {import('./store.js').LaunchModel} LaunchModel */
/**
 * @typedef {object} HeaderDom  the elements of index.html this view writes
 * @property {HTMLSelectElement} kernel
 * @property {HTMLSelectElement} launch
 * @property {HTMLSelectElement} line
 * @property {HTMLElement} follow
 * @property {HTMLElement} cursorNote
 * @property {HTMLElement} programs
 * @property {HTMLElement} legend
 * @property {HTMLElement} message
 */

/**
 * @param {HeaderDom} dom
 * @param {(p: number | null, additive: boolean) => void} onPickProgram  from a program chip (null: all)
 */
export function createHeaderView(dom, onPickProgram) {
  /** @type {import('./ui.js').ProgramGrid | null} */
  let programGrid = null; // the chips of the loaded launch

  return {
    /**
     * @param {string} text  '' hides the message line
     * @param {string} [kind]  info | error
     */
    message(text, kind = 'info') {
      dom.message.textContent = text || '';
      dom.message.className = `tl-message ${kind}`;
      dom.message.hidden = !text;
    },
    /**
     * @param {Kernel[]} kernels
     * @param {Kernel} k
     */
    kernels(kernels, k) {
      fillSelect(
        dom.kernel,
        kernels.map((x, i) => ({ value: i, label: kernelLabel(x, placesOf(state)) })),
        kernels.indexOf(k),
      );
    },
    /**
     * Select kernel `k` in the picker without a change event (the cursor or the host chose it).
     * @param {Kernel} k
     */
    pickKernel(k) {
      const kernels = (state.overview && state.overview.kernels) || [];
      dom.kernel.value = String(kernels.indexOf(k));
    },
    /** @param {Kernel} k */
    launches(k) {
      const launches = k.launches || [];
      fillSelect(
        dom.launch,
        launches.map((l) => ({ value: l.index, label: launchLabel(l, placesOf(state)) })),
        null,
      );
      dom.launch.disabled = launches.length < 2;
    },
    /** @param {Launch} li */
    pickLaunch(li) {
      dom.launch.value = String(li.index);
    },
    noKernels() {
      fillSelect(dom.kernel, [], null);
      fillSelect(dom.launch, [], null);
    },
    /** What belongs to a launch, emptied (the tensor cards are the tensors view's). */
    clear() {
      dom.programs.replaceChildren();
      fillSelect(dom.line, [], null);
      dom.follow.textContent = '';
      dom.cursorNote.textContent = '';
    },
    /**
     * The line picker and the program chips of a new launch.
     * @param {LaunchModel} L
     */
    build(L) {
      fillSelect(
        dom.line,
        Array.from(L.lines.values()).map((x) => ({ value: x.key, label: lineLabel(state, x, true) })),
        state.follow ? `${state.follow.file}\n${state.follow.line}` : null,
      );
      dom.line.disabled = L.lines.size === 0;
      programGrid = buildProgramGrid(dom.programs, L.grid, L.nPrograms, onPickProgram);
    },
    follow() {
      const h = headerText(state);
      dom.follow.textContent = h.follow;
      if (h.lineKey !== null) dom.line.value = h.lineKey;
      dom.cursorNote.textContent = h.cursorNote;
    },
    programs() {
      updateProgramGrid(
        /** @type {import('./ui.js').ProgramGrid} */ (programGrid), // a render follows build()
        state.programs,
        byProgram(state) ? (p) => cssColor(programColor(p, isDark())) : null,
      );
    },
    legend() {
      buildLegend(dom.legend, legendItems(state));
    },
  };
}
