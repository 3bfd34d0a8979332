// View of the page's top: the kernel, launch and line pickers, the followed line, the programs row,
// the legend and the message line. Reads the store, writes these elements; user input goes to the
// controller's callbacks.

import { byProgram } from './derive.js';
import { headerText, kernelLabel, launchLabel, legendItems, lineLabel } from './describe.js';
import { programColor } from './draw.js';
import { state } from './store.js';
import { cssColor, isDark } from './theme.js';
import { buildLegend, buildProgramGrid, fillSelect, updateProgramGrid } from './ui.js';

/**
 * @param dom          the page's elements (viewer.js)
 * @param onPickProgram (p | null, additive) from a program chip
 */
export function createHeaderView(dom, onPickProgram) {
  let programGrid = null; // the chips of the loaded launch

  return {
    message(text, kind = 'info') {
      dom.message.textContent = text || '';
      dom.message.className = `tl-message ${kind}`;
      dom.message.hidden = !text;
    },
    kernels(kernels, k) {
      fillSelect(
        dom.kernel,
        kernels.map((x, i) => ({ value: i, label: kernelLabel(x) })),
        kernels.indexOf(k),
      );
    },
    /** Select kernel `k` in the picker without a change event (the cursor or the host chose it). */
    pickKernel(k) {
      const kernels = (state.overview && state.overview.kernels) || [];
      dom.kernel.value = String(kernels.indexOf(k));
    },
    launches(k) {
      const launches = k.launches || [];
      fillSelect(
        dom.launch,
        launches.map((l) => ({ value: l.index, label: launchLabel(l) })),
        null,
      );
      dom.launch.disabled = launches.length < 2;
    },
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
    /** The line picker and the program chips of a new launch. */
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
        programGrid,
        state.programs,
        byProgram(state) ? (p) => cssColor(programColor(p, isDark())) : null,
      );
    },
    legend() {
      buildLegend(dom.legend, legendItems(state));
    },
  };
}
