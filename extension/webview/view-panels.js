// View of the panels under the maps and of the program id fields: the selected program's memory
// operations, its tl.dot tiles and the launch's Performance, from the store; panels.js builds their
// DOM. A click in a panel goes to the controller's callbacks.

import { perfKey, pidFieldsShown, placesOf, singleProgram } from './derive.js';
import { programOps, dotsOf, isFailed } from './model.js';
import { updateProgramFields, buildOpsList, buildDotPanel, buildPerformancePanel } from './panels.js';
import { state, page } from './store.js';
import { pidLabel } from './ui.js';

/**
 * @typedef {object} PanelActions  what a click in a panel asks of the controller
 * @property {(o: import('./model.js').ProgramOp) => void} op  a row of the operations list
 * @property {(a: import('./panels.js').LinkedOperand) => void} operand  a tl.dot operand's load
 * @property {(key: string) => void} gpu  the Performance GPU
 * @property {(m: import('./panels.js').LineMetrics) => void} metric  a row of the Performance table
 */

/**
 * @param {{ops: HTMLElement, dots: HTMLElement, perf: HTMLElement}} dom  the panels of index.html
 * @param {import('./panels.js').Tools} tools
 * @param {(index: number) => import('./panels.js').TileValues | undefined} tiles  a tl.dot execution's
 *   tile values (the loader's: undefined while they load)
 * @param {PanelActions} on
 */
export function createPanelsView(dom, tools, tiles, on) {
  function render() {
    const L = state.launch;
    if (!L) return;
    const one = singleProgram(state);
    updateProgramFields(tools, L.grid, pidFieldsShown(state));
    const places = placesOf(state);
    buildOpsList(
      dom.ops,
      one === null
        ? 'Memory operations of the selected program'
        : `Memory operations of program ${pidLabel(one, L.grid)}, in order`,
      one === null ? null : programOps(L.tensors, one),
      places,
      on.op,
    );
    const prog = one === null ? 0 : one;
    const dots = state.dots && !isFailed(state.dots) ? dotsOf(state.dots, prog, state.iteration) : [];
    buildDotPanel(
      dom.dots,
      dots,
      pidLabel(prog, L.grid) + (one === null ? ' (pick a program to change it)' : ''),
      state.iteration ?? 0,
      places,
      tiles,
      on.operand,
    );
    const key = perfKey(state, page.loadSeq);
    if (dom.perf.dataset.for !== key) {
      dom.perf.dataset.for = key;
      buildPerformancePanel(dom.perf, state.perf, state.gpu, places, on.gpu, on.metric);
    }
  }
  return { render };
}
