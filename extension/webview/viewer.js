// Entry point of the access-map page: the controller. Host events and user input come here and go
// one way: a store mutation (or a load, which writes the store), then a render of the views, which
// read the store and write the DOM. The page's modules:
//
//   controller  viewer.js     host events and DOM events -> store mutations, loads, renders
//               events.js     host events (cursor, refresh, select) -> store mutations, loads
//               player.js     the Iteration slider kept valid, and its playback
//               loader.js     requests to the host (overview, launch, value maps, values) -> store
//               pointer.js    the cell under the pointer: tooltip, value on hover, click to reveal
//   model       store.js      the page's state, its named mutations, what is saved across reloads
//               derive.js     pure questions of the state (followed line, cursor's kernel, slices...)
//               describe.js   pure texts of the state (header, legend, card status, tooltip)
//               model.js      host JSON -> tensor models, lines, loop steps, a program's operations, tl.dot tiles
//               encoding.js   ENC element sets -> typed arrays
//               layout.js     tensor view geometry (grid, slices, out-of-bounds bands)
//               raster.js     access sets -> per-cell flag arrays
//               query.js      which accesses hit a cell
//   view        view-header.js   pickers, followed line, program chips, legend, message
//               view-tensors.js  tensor cards, N-D slices, rendering a tensor
//               view-values.js   a card's Values box and histogram
//               view-panels.js   program id fields, operations, tl.dot and Performance panels
//               panels.js     DOM of the tools row, operations list, tl.dot and Performance panels
//               ui.js         DOM: pickers, program grid, legend, cards, tooltip
//               draw.js       per-cell arrays -> canvas pixels (downsampled)
//               values.js     value colour map and histogram
//               theme.js      the theme's palettes
//   other       host.js       messaging with VS Code or the HTTP viewer
//               testhook.js   window.__viewer, what the tests read of the page

import { createHost } from './host.js';
import { lineAt, programsMatching, toggledPrograms } from './derive.js';
import { noKernelsMessage } from './describe.js';
import { createHostEvents } from './events.js';
import { createLoader } from './loader.js';
import { buildTools } from './panels.js';
import { createPlayer } from './player.js';
import { createPointer } from './pointer.js';
import * as store from './store.js';
import { installTestHook } from './testhook.js';
import { resetPalettes } from './theme.js';
import { Tooltip } from './ui.js';
import { createHeaderView } from './view-header.js';
import { createPanelsView } from './view-panels.js';
import { createTensorsView } from './view-tensors.js';

const { state } = store;

const host = createHost(window);
store.connectStorage(host);
// index.html has every one of them: the page is never run without it.
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const select = (/** @type {string} */ id) => /** @type {HTMLSelectElement} */ ($(id));
const dom = {
  kernel: select('tl-kernel'),
  launch: select('tl-launch'),
  line: select('tl-line'),
  follow: $('tl-follow'),
  cursorNote: $('tl-cursor-note'),
  programs: $('tl-programs'),
  legend: $('tl-legend'),
  maps: $('tl-maps'),
  message: $('tl-message'),
  tools: $('tl-tools'),
  dots: $('tl-dots'),
  ops: $('tl-ops-panel'),
  perf: $('tl-perf'),
};
const tooltip = new Tooltip(document.body);
const tools = buildTools(dom.tools, {
  onValues(v) {
    store.setValuesMode(v);
    store.save();
    if (state.launch) render();
  },
  onIteration(i) {
    player.stop();
    store.setIteration(i);
    if (state.launch) render();
  },
  onPlay: () => player.toggle(),
  onProgramId: pickProgramAxes,
});

const player = createPlayer(tools, render);
const header = createHeaderView(dom, pickProgram);
const loader = createLoader(host, {
  message: header.message,
  noKernels(ov) {
    header.noKernels();
    clearLaunchViews();
    header.message(noKernelsMessage(ov), 'info');
  },
  kernels: header.kernels,
  launches: header.launches,
  noLaunch(k) {
    clearLaunchViews();
    header.message(`${k.name} was defined but never launched.`, 'info');
  },
  launchPicked: header.pickLaunch,
  launch(L) {
    pointer.reset();
    header.build(L);
    tensors.build(L);
    render();
    store.save();
  },
  dotTiles() {
    if (state.launch) panels.render();
  },
  valueMap(tm) {
    const top = tm.parent || tm;
    if (state.launch && state.launch.tensors.includes(top)) {
      tensors.render(top);
      store.countRender();
    }
  },
});
const pointer = createPointer(host, loader, tooltip);
const tensors = createTensorsView(dom.maps, {
  attachPointer: pointer.attach,
  valueMap: loader.valueMap,
  onWrap(tm, wrap) {
    store.setWrap(tm, wrap);
    tensors.render(tm);
    store.save();
  },
  onSliceView(tm, patch) {
    store.patchView(tm.name, patch);
    store.save();
    tensors.rebuildSlices(tm);
  },
});
const panels = createPanelsView(dom, tools, loader.dotTiles, {
  op(o) {
    store.setIteration(o.iterations > 1 ? o.iteration : null);
    player.stop();
    if (!setFollow(o.file, o.line)) render();
    host.reveal(o.file, o.line);
  },
  operand(a) {
    player.stop();
    store.setIteration(a.iteration);
    if (!setFollow(a.file, a.line)) render();
  },
  gpu(g) {
    store.setGpu(g);
    store.save();
    panels.render();
  },
  metric(m) {
    if (!setFollow(m.file, m.line)) render();
  },
});

function clearLaunchViews() {
  tensors.clear();
  header.clear();
}

/** Every view, from the store. Only while a launch is loaded (a load without one clears the views). */
function render() {
  const L = /** @type {import('./store.js').LaunchModel} */ (state.launch);
  const t0 = performance.now();
  header.follow();
  header.programs();
  player.clamp();
  for (const tm of L.tensors) tensors.render(tm);
  header.legend();
  panels.render();
  store.rendered(performance.now() - t0);
}

// ---------------------------------------------------------------- selection

/**
 * Follow the access line at (file, line); false when the launch has none there.
 * @param {string} file
 * @param {number} line
 */
function setFollow(file, line) {
  const L = lineAt(state, file, line);
  if (!L) return false;
  store.setFollow({ file: L.file, line: L.line });
  render();
  store.save();
  return true;
}

/** @param {(number | null)[]} vals  the program id fields: per axis the id, or null for any */
function pickProgramAxes(vals) {
  const L = state.launch;
  if (!L) return;
  const fields = vals.every((v) => v === null) ? null : vals;
  store.setPidFields(fields);
  store.selectPrograms(fields ? programsMatching(L, vals) : null);
  render();
  store.save();
}

/**
 * @param {number | null} p  a program chip (null: all)
 * @param {boolean} additive  shift/ctrl-click
 */
function pickProgram(p, additive) {
  store.setPidFields(null);
  store.selectPrograms(toggledPrograms(state.programs, p, additive));
  render();
  store.save();
}

// ---------------------------------------------------------------- DOM events

dom.kernel.addEventListener('change', () => {
  const k = state.overview && state.overview.kernels[Number(dom.kernel.value)];
  if (k) loader.selectKernel(k, null);
});
dom.launch.addEventListener('change', () => {
  const li = state.kernel && (state.kernel.launches || []).find((l) => String(l.index) === dom.launch.value);
  if (li) loader.loadLaunch(li);
});
dom.line.addEventListener('change', () => {
  const L = state.launch && state.launch.lines.get(dom.line.value);
  if (L) setFollow(L.file, L.line);
});

// A resize redraws once per frame, however many resize notifications the frame brings.
let resizeQueued = false;
new ResizeObserver(() => {
  if (resizeQueued || !state.launch) return;
  resizeQueued = true;
  requestAnimationFrame(() => {
    resizeQueued = false;
    if (state.launch) render();
  });
}).observe(dom.maps);

// VS Code changes the theme class on <body>: the palettes are read again.
new MutationObserver(() => {
  resetPalettes();
  if (state.launch) render();
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

installTestHook(window, host.kind, dom.follow, render);

// ---------------------------------------------------------------- start

const onEvent = createHostEvents(loader, header, setFollow);
host.onEvent((ev) => {
  store.beginWork();
  onEvent(ev)
    .catch((e) => header.message(e.message, 'error'))
    .finally(() => {
      store.endWork();
      store.countEvent();
    });
});
const saved = store.restore();
tools.vsel.value = state.values;
host.ready();
loader.loadOverview(saved);
