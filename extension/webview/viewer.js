// Entry point of the access-map page (the controller): state, data loading, and wiring of the modules.
//   host.js     messaging with VS Code or the HTTP viewer
//   model.js    host JSON -> tensor models, lines, loop steps, a program's operations, tl.dot tiles
//   values.js   value colour map and histogram
//   panels.js   DOM of the tools row, operations list, tl.dot and Performance panels
//   encoding.js ENC element sets -> typed arrays
//   layout.js   tensor view geometry (grid, slices, out-of-bounds bands)
//   raster.js   access sets -> per-cell flag arrays
//   draw.js     per-cell arrays -> canvas pixels (downsampled)
//   query.js    which accesses hit a cell
//   ui.js       DOM: pickers, program grid, legend, tooltip

import { createHost } from './host.js';
import { makeLayout, defaultWrap } from './layout.js';
import {
  buildTensorModel as modelOf,
  collectLines,
  iterationCount,
  accessesAtIteration,
  programOps,
  dotsOf,
} from './model.js';
import { decodeValueMap, valueColors, histogramFor, drawHistogram } from './values.js';
import {
  buildTools,
  updateIteration,
  updateProgramFields,
  buildOpsList,
  buildDotPanel,
  buildPerformancePanel,
} from './panels.js';
import {
  rasterize,
  RANK,
  R_NONE,
  R_MASK_O,
  R_OTHER,
  R_OOB_O,
  R_MASK_F,
  R_FOLLOW,
  R_MULTI,
  R_OOB_F,
  F_FOLLOW,
  F_OTHER,
  F_MASK_F,
  F_MASK_O,
  F_OOB_F,
  F_OOB_O,
  F_MULTI,
} from './raster.js';
import { makePalette, drawView, pxToCell, cellToPx, programColor } from './draw.js';
import { accessesAt } from './query.js';
import {
  el,
  basename,
  fillSelect,
  gridLabel,
  pidLabel,
  unlinearPid,
  rangesLabel,
  buildProgramGrid,
  updateProgramGrid,
  buildLegend,
  buildTensorCard,
  numberInput,
  Tooltip,
} from './ui.js';

const RANK_NAMES = {
  [R_NONE]: 'untouched',
  [R_MASK_O]: 'masked-other',
  [R_OTHER]: 'other',
  [R_OOB_O]: 'oob-other',
  [R_MASK_F]: 'masked-followed',
  [R_FOLLOW]: 'followed',
  [R_MULTI]: 'followed-several',
  [R_OOB_F]: 'oob-followed',
};
const MAX_PROBED_TENSORS = 64;
const VALUE_BLOCK = 256;
const VALUE_DEBOUNCE_MS = 150;

const host = createHost(window);
const $ = (id) => document.getElementById(id);
const dom = {
  kernel: $('tl-kernel'),
  launch: $('tl-launch'),
  line: $('tl-line'),
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
    state.values = v;
    saveState();
    if (state.launch) renderAll();
  },
  onIteration(i) {
    stopPlaying();
    state.iteration = i;
    if (state.launch) renderAll();
  },
  onPlay() {
    togglePlay();
  },
  onProgramId(vals) {
    pickProgramAxes(vals);
  },
});

const state = {
  overview: null,
  kernel: null, // kernel entry of the overview
  launchInfo: null, // launch entry of the overview
  launch: null, // loaded launch model
  follow: null, // {file, line}
  cursor: null, // last cursor event {file, line}
  programs: null, // null = all, else Set of linear program ids
  views: {}, // tensor name -> {wrap, slice}
  pendingFollow: null,
  values: 'off', // Values: off | after | before
  iteration: null, // Iteration of the followed line's loop (null = all)
  playing: null, // interval id while the iteration plays
  gpu: 'h100', // Performance: the GPU of the roofline estimate
  perf: null, // performance of the launch (host answer) or {error}
  dots: null, // tl.dot executions of the launch or {error}
};
const PLAY_MS = 700;
let loadSeq = 0;
let busy = 0;
let renderCount = 0;
let eventCount = 0;
let loadedOnce = false;
let lastRenderMs = 0;
let programGrid = null;
let palettes = new Map();
const hover = { tm: null, cell: -1, index: -1 };

// ---------------------------------------------------------------- persistence

function saveState() {
  host.setState({
    kernel: state.kernel ? state.kernel.name : null,
    kernelFile: state.kernel ? state.kernel.file : null,
    launch: state.launchInfo ? state.launchInfo.index : null,
    follow: state.follow,
    programs: state.programs ? Array.from(state.programs) : null,
    views: state.views,
    values: state.values,
    gpu: state.gpu,
  });
}

function restoreState() {
  const s = host.getState();
  if (!s || typeof s !== 'object') return null;
  if (s.follow && typeof s.follow.line === 'number')
    state.follow = { file: String(s.follow.file || ''), line: s.follow.line };
  if (Array.isArray(s.programs)) state.programs = new Set(s.programs.filter(Number.isInteger));
  if (s.views && typeof s.views === 'object') state.views = s.views;
  if (['off', 'after', 'before'].includes(s.values)) state.values = s.values;
  if (typeof s.gpu === 'string') state.gpu = s.gpu;
  return s;
}

// ---------------------------------------------------------------- messages

function showMessage(text, kind = 'info') {
  dom.message.textContent = text || '';
  dom.message.className = `tl-message ${kind}`;
  dom.message.hidden = !text;
}

// ---------------------------------------------------------------- loading

async function loadOverview(saved) {
  const seq = ++loadSeq;
  busy++;
  try {
    const ov = await host.request('kernels', {});
    if (seq !== loadSeq) return;
    state.overview = ov;
    const kernels = (ov && ov.kernels) || [];
    if (!kernels.length) {
      fillSelect(dom.kernel, [], null);
      fillSelect(dom.launch, [], null);
      clearLaunch();
      showMessage(
        ov && ov.status && ov.status !== 'ok'
          ? `No kernel launches recorded (${ov.status}).`
          : 'No kernel launches recorded for this file.',
        'info',
      );
      return;
    }
    const pendingSel = state.pendingFollow;
    const want =
      pendingSel && pendingSel.kernel
        ? pendingSel
        : saved || (state.kernel && { kernel: state.kernel.name, kernelFile: state.kernel.file });
    let k = null;
    if (want && want.kernel) {
      k =
        kernels.find((x) => x.name === want.kernel && (!want.kernelFile || x.file === want.kernelFile)) ||
        kernels.find((x) => x.name === want.kernel);
    }
    if (!k) k = kernels.find((x) => (x.launches || []).length) || kernels[0];
    fillSelect(
      dom.kernel,
      kernels.map((x, i) => ({
        value: i,
        label: `${x.name}  (${basename(x.file)}:${x.line})${(x.launches || []).length ? '' : ' — not launched'}`,
      })),
      kernels.indexOf(k),
    );
    let launchIndex = null;
    if (saved && saved.kernel === k.name && typeof saved.launch === 'number') launchIndex = saved.launch;
    else if (!pendingSel && state.kernel && state.kernel.name === k.name && state.launchInfo)
      launchIndex = state.launchInfo.index;
    await selectKernel(k, launchIndex, seq);
  } catch (e) {
    if (seq === loadSeq) showMessage(`Could not load kernels: ${e.message}`, 'error');
  } finally {
    busy--;
    loadedOnce = true;
  }
}

async function selectKernel(k, launchIndex, seq = ++loadSeq) {
  state.kernel = k;
  const launches = k.launches || [];
  fillSelect(
    dom.launch,
    launches.map((l) => ({
      value: l.index,
      label: `launch ${l.index}: grid ${gridLabel(l.grid)} — ${basename(l.file)}:${l.line}`,
    })),
    null,
  );
  dom.launch.disabled = launches.length < 2;
  if (!launches.length) {
    clearLaunch();
    showMessage(`${k.name} was defined but never launched.`, 'info');
    saveState();
    return;
  }
  const li = launches.find((l) => l.index === launchIndex) || launches[0];
  dom.launch.value = String(li.index);
  await loadLaunch(li, seq);
}

function clearLaunch() {
  state.launch = null;
  state.launchInfo = null;
  dom.maps.replaceChildren();
  dom.programs.replaceChildren();
  fillSelect(dom.line, [], null);
  dom.follow.textContent = '';
  dom.cursorNote.textContent = '';
}

async function fetchTensorMaps(li) {
  const base = { launch: li.index };
  if (Array.isArray(li.tensors)) {
    const maps = await Promise.all(
      li.tensors.map((t) =>
        host
          .request('accessMap', { ...base, tensor: typeof t === 'object' ? t.index : t })
          .catch((e) => ({ error: e.message, tensor: typeof t === 'object' ? t : { index: t, name: `tensor ${t}` } })),
      ),
    );
    return maps;
  }
  // The overview does not list tensors: ask for 0, 1, 2, ... until the host says there is none.
  const maps = [];
  for (let i = 0; i < MAX_PROBED_TENSORS; i++) {
    try {
      maps.push(await host.request('accessMap', { ...base, tensor: i }));
    } catch {
      break;
    }
  }
  return maps;
}

async function loadLaunch(li, seq = ++loadSeq) {
  busy++;
  try {
    state.launchInfo = li;
    const extra = (method) => host.request(method, { launch: li.index }).catch((e) => ({ error: e.message }));
    const [maps, perf, dots] = await Promise.all([fetchTensorMaps(li), extra('performance'), extra('dots')]);
    if (seq !== loadSeq) return;
    state.perf = perf;
    state.dots = dots;
    showMessage('');
    const grid = (li.grid || [1, 1, 1]).concat([1, 1, 1]).slice(0, 3);
    const nPrograms = li.programs || grid[0] * grid[1] * grid[2];
    const tensors = maps.map((m, i) => buildTensorModel(m, i, grid));
    const lines = collectLines(tensors);
    state.launch = { info: li, grid, nPrograms, tensors, lines };
    if (state.programs) {
      for (const p of Array.from(state.programs)) if (p >= nPrograms) state.programs.delete(p);
      if (!state.programs.size) state.programs = null;
    }
    chooseFollow();
    buildLaunchUI();
    renderAll();
    saveState();
  } catch (e) {
    if (seq === loadSeq) showMessage(`Could not load launch ${li.index}: ${e.message}`, 'error');
  } finally {
    busy--;
  }
}

function buildTensorModel(m, i, grid) {
  const tm = modelOf(m, i, grid);
  if (!tm.error) tm.view = viewFor(tm);
  return tm;
}

function viewFor(tm) {
  const saved = state.views[tm.name] || {};
  const shape = tm.meta.shape || [];
  const numel = shape.reduce((a, b) => a * b, 1);
  return {
    wrap: shape.length === 1 ? (saved.wrap > 0 ? saved.wrap : defaultWrap(numel)) : undefined,
    slice: shape.length > 2 ? saved.slice || 0 : 0,
  };
}

function lineAt(file, line) {
  if (!state.launch) return null;
  let best = null;
  for (const L of state.launch.lines.values()) {
    if (file && L.file !== file) continue;
    if (line >= L.line && line <= L.endLine && (!best || L.line > best.line)) best = L;
  }
  return best;
}

function chooseFollow() {
  const lines = state.launch.lines;
  const pend = state.pendingFollow;
  state.pendingFollow = null;
  const cand = [];
  if (pend && pend.line) cand.push(pend);
  if (state.cursor) cand.push(state.cursor);
  if (state.follow) cand.push(state.follow);
  for (const c of cand) {
    const L = lineAt(c.file, c.line);
    if (L) {
      state.follow = { file: L.file, line: L.line };
      return;
    }
  }
  const first = lines.values().next().value;
  state.follow = first ? { file: first.file, line: first.line } : null;
}

// ---------------------------------------------------------------- UI for a launch

function buildLaunchUI() {
  const L = state.launch;
  tooltip.hide();
  hover.tm = null;
  // line picker
  fillSelect(
    dom.line,
    Array.from(L.lines.values()).map((x) => ({ value: x.key, label: lineLabel(x, true) })),
    state.follow ? `${state.follow.file}\n${state.follow.line}` : null,
  );
  dom.line.disabled = L.lines.size === 0;
  // program grid
  programGrid = buildProgramGrid(dom.programs, L.grid, L.nPrograms, onPickProgram);
  // cards
  dom.maps.replaceChildren();
  for (const tm of L.tensors) {
    tm.ui = buildTensorCard({
      index: tm.index,
      name: tm.name,
      dtype: tm.meta.dtype,
      shape: tm.meta.shape,
      strides: tm.meta.strides,
    });
    tm.ui.values = el('div', 'tl-values-box');
    tm.ui.values.hidden = true;
    tm.ui.card.append(tm.ui.values);
    dom.maps.append(tm.ui.card);
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
    dom.maps.append(el('p', 'tl-note', 'This launch has no tensor arguments with recorded accesses.'));
}

function lineLabel(L, withFile) {
  const items = L.items.map((it) => `${it.op}(${it.tensor} …)`).join('; ');
  const where =
    withFile && state.kernel && L.file !== state.kernel.file ? `${basename(L.file)}:${L.line}` : `line ${L.line}`;
  return `${where}: ${items}`;
}

function buildViewControls(tm) {
  const shape = tm.meta.shape || [];
  tm.ui.controls.replaceChildren();
  if (shape.length === 1) {
    tm.ui.controls.append(
      numberInput('row width', tm.view.wrap, 1, Math.max(1, shape[0]), (v) => {
        tm.view.wrap = v;
        state.views[tm.name] = { ...(state.views[tm.name] || {}), wrap: v };
        tm.layout = null;
        renderTensor(tm);
        saveState();
      }),
    );
  } else if (shape.length > 2) {
    buildSliceControls(tm);
  }
}

// ---------------------------------------------------------------- N-D tensors: a grid of 2-D slices

const MAX_SLICES = 16;

/** The slices shown: the last leading dimension's indices [first, first + 16), for the outer indices chosen. */
function sliceSpec(tm) {
  const shape = tm.meta.shape;
  const lead = shape.slice(0, -2);
  const inner = lead[lead.length - 1];
  const saved = state.views[tm.name] || {};
  const outer = lead.slice(0, -1).map((d, k) => Math.max(0, Math.min(d - 1, (saved.outer || [])[k] | 0)));
  const first = Math.max(0, Math.min(Math.max(0, inner - 1), saved.first | 0));
  let o = 0;
  for (let k = 0; k < outer.length; k++) o = o * lead[k] + outer[k];
  return { lead, inner, outer, first, count: Math.min(MAX_SLICES, inner - first), base: o * inner };
}

function saveSliceView(tm, patch) {
  state.views[tm.name] = { ...(state.views[tm.name] || {}), ...patch };
  saveState();
}

function buildSliceControls(tm) {
  const sp = sliceSpec(tm);
  const c = tm.ui.controls;
  c.append(el('span', 'tl-slice-label', 'outer dims'));
  sp.outer.forEach((v, k) => {
    c.append(
      numberInput(`dim ${k}`, v, 0, sp.lead[k] - 1, (x) => {
        const outer = sliceSpec(tm).outer.slice();
        outer[k] = x;
        saveSliceView(tm, { outer });
        rebuildSlices(tm);
      }),
    );
  });
  if (sp.inner > MAX_SLICES) {
    c.append(
      numberInput(`dim ${sp.lead.length - 1} from`, sp.first, 0, sp.inner - 1, (x) => {
        saveSliceView(tm, { first: x });
        rebuildSlices(tm);
      }),
    );
  }
}

function sliceLabel(tm, idx) {
  return `${tm.name}[${idx.join(', ')}, :, :]`;
}

/** One sub-model per shown slice: same accesses, its own view, canvas and hit-testing. */
function buildSlices(tm) {
  const sp = sliceSpec(tm);
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
  tm.ui.sliceNote.textContent =
    `${tm.meta.shape.length}-D: slices ${tm.name}[${sp.outer.concat([`${sp.first}:${sp.first + sp.count}`]).join(', ')}, :, :]` +
    ` of ${sp.inner} along dim ${sp.lead.length - 1}` +
    (sp.count < sp.inner ? ` (${MAX_SLICES} at a time: pick where they start)` : '');
}

function rebuildSlices(tm) {
  buildSlices(tm);
  renderTensor(tm);
  renderCount++;
}

// ---------------------------------------------------------------- rendering

function isDark() {
  return (
    !document.body.classList.contains('vscode-light') &&
    (document.body.classList.contains('vscode-dark') ||
      document.body.classList.contains('vscode-high-contrast') ||
      !(window.matchMedia && window.matchMedia('(prefers-color-scheme: light)').matches))
  );
}

function paletteFor(kind) {
  const n = state.launch ? state.launch.nPrograms : 1;
  const key = `${kind}:${n}`;
  let p = palettes.get(key);
  if (!p) {
    p = makePalette(getComputedStyle(document.body), kind, n, isDark());
    palettes.set(key, p);
  }
  return p;
}

function byProgram() {
  const L = state.launch;
  if (!L) return false;
  return state.programs === null ? L.nPrograms > 1 : state.programs.size > 1;
}

function followKindOf(tm) {
  const kinds = new Set();
  for (const s of tm.sites.values()) if (isFollowedSite(s)) kinds.add(s.kind);
  if (kinds.size === 1) {
    const k = kinds.values().next().value;
    if (k === 'store' || k === 'atomic') return k;
  }
  return 'load';
}

function isFollowedSite(s) {
  return !!state.follow && s.file === state.follow.file && s.line === state.follow.line;
}

function renderAll() {
  const t0 = performance.now();
  updateHeader();
  const sel = state.programs;
  updateProgramGrid(programGrid, sel, byProgram() ? (p) => cssColor(programColor(p, isDark())) : null);
  clampIteration();
  for (const tm of state.launch.tensors) renderTensor(tm);
  updateLegend();
  renderPanels();
  lastRenderMs = performance.now() - t0;
  renderCount++;
}

// ---------------------------------------------------------------- Values, Iteration, panels

function followedIterations() {
  return state.launch ? iterationCount(state.launch.tensors, isFollowedSite) : 0;
}

function clampIteration() {
  const n = followedIterations();
  if (state.iteration !== null && state.iteration >= n) state.iteration = n > 0 ? n - 1 : null;
  if (n <= 1) {
    state.iteration = null;
    stopPlaying();
  }
  updateIteration(tools, n, state.iteration, state.playing !== null);
}

function stopPlaying() {
  if (state.playing !== null) clearInterval(state.playing);
  state.playing = null;
}

function togglePlay() {
  if (state.playing !== null) {
    stopPlaying();
    clampIteration();
    return;
  }
  const n = followedIterations();
  if (n <= 1) return;
  state.playing = setInterval(() => {
    const m = followedIterations();
    if (m <= 1 || !state.launch) {
      stopPlaying();
      return;
    }
    state.iteration = state.iteration === null ? 0 : (state.iteration + 1) % m;
    renderAll();
  }, PLAY_MS);
  if (state.iteration === null) state.iteration = 0;
  renderAll();
}

/** The one selected program (linear id), or null when none or several are selected. */
function singleProgram() {
  return state.programs && state.programs.size === 1 ? state.programs.values().next().value : null;
}

function renderPanels() {
  const L = state.launch;
  if (!L) return;
  const one = singleProgram();
  // the fields show the axes picked there (some may be "any"), else the one selected program's id
  const fields = state.pidFields && state.programs ? state.pidFields : one === null ? null : unlinearPid(one, L.grid);
  updateProgramFields(tools, L.grid, fields);
  const kfile = state.kernel ? state.kernel.file : '';
  buildOpsList(
    dom.ops,
    one === null
      ? 'Memory operations of the selected program'
      : `Memory operations of program ${pidLabel(one, L.grid)}, in order`,
    one === null ? null : programOps(L.tensors, one),
    kfile,
    (o) => {
      state.iteration = o.iterations > 1 ? o.iteration : null;
      stopPlaying();
      if (!setFollow(o.file, o.line)) renderAll();
      host.reveal(o.file, o.line);
    },
  );
  const prog = one === null ? 0 : one;
  const dots = state.dots && !state.dots.error ? dotsOf(state.dots, prog, state.iteration) : [];
  buildDotPanel(
    dom.dots,
    dots,
    pidLabel(prog, L.grid) + (one === null ? ' (pick a program to change it)' : ''),
    state.iteration ?? 0,
    (operand) => {
      stopPlaying();
      state.iteration = operand.iteration;
      if (!setFollow(operand.file, operand.line)) renderAll();
    },
  );
  if (dom.perf.dataset.for !== perfKey()) {
    dom.perf.dataset.for = perfKey();
    buildPerformancePanel(
      dom.perf,
      state.perf,
      state.gpu,
      kfile,
      (g) => {
        state.gpu = g;
        saveState();
        renderPanels();
      },
      (m) => {
        if (!setFollow(m.file, m.line)) renderAll();
      },
    );
  }
}

function perfKey() {
  return `${state.launchInfo ? state.launchInfo.index : ''}/${state.gpu}/${loadSeq}`;
}

/** The value map of a tensor for the Values mode (requested once, then cached), or undefined while loading. */
function valueMapOf(tm) {
  if (state.values === 'off') return null;
  const key = state.values;
  const got = tm.valueMaps.get(key);
  if (got && got.ready) return got.vm;
  if (!got) {
    const entry = { ready: false, vm: null };
    tm.valueMaps.set(key, entry);
    busy++;
    host
      .request('valueMap', { launch: state.launchInfo.index, tensor: tm.index, when: key })
      .then((r) => {
        entry.vm = decodeValueMap(r);
      })
      .catch((e) => {
        entry.vm = { none: e.message };
      })
      .finally(() => {
        entry.ready = true;
        busy--;
        const top = tm.parent || tm;
        if (state.launch && state.launch.tensors.includes(top)) {
          renderTensor(top);
          renderCount++;
        }
      });
  }
  return undefined;
}

function renderValues(tm) {
  const vm = valueMapOf(tm);
  const box = tm.ui.values;
  if (!box) return vm && !vm.none ? vm : null; // a slice of an N-D tensor: its card shows the values line
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
  if (vm.none) {
    box.replaceChildren(el('div', 'tl-note', `values ${when}: not available (${vm.none})`));
    return null;
  }
  const parts = [
    el(
      'div',
      'tl-values-scale',
      `values ${when}: colour from ${fmtNum(vm.lo)} (dark) to ${fmtNum(vm.hi)} (bright); ` +
        'cells the followed line did not touch are dimmed',
    ),
  ];
  if (vm.block > 1) {
    parts.push(
      el(
        'div',
        'tl-note tl-downsampled',
        `downsampled: each colour is the mean of ${vm.block} neighbouring elements ` +
          `(${vm.numel.toLocaleString()} elements, ${vm.q.length.toLocaleString()} colours sent); the tooltip shows exact values`,
      ),
    );
  }
  const h = histogramFor(vm, state.follow);
  if (h) {
    const cv = el('canvas', 'tl-histogram');
    parts.push(
      el(
        'div',
        'tl-histogram-title',
        `histogram of the ${h.elements.toLocaleString()} elements line ${h.line} touched ` +
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
  return vm;
}

function fmtNum(v) {
  return typeof v === 'number' ? String(Number(v.toPrecision(4))) : String(v);
}

function cssColor(c) {
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

function renderTensor(tm) {
  if (tm.error) return;
  if (tm.slices) {
    const t0 = performance.now();
    renderValues(tm); // the card's values line and histogram (all slices share them)
    for (const sub of tm.slices) renderTensor(sub);
    tm.raster = tm.slices.length ? tm.slices[0].raster : null;
    tm.followKind = tm.slices.length ? tm.slices[0].followKind : 'load';
    tm.renderMs = performance.now() - t0;
    tm.ui.status.textContent = '';
    return;
  }
  const t0 = performance.now();
  if (!tm.layout) tm.layout = makeLayout(tm.meta, tm.view, tm.extent);
  const sel = state.programs;
  const followed = new Uint8Array(Math.max(0, ...Array.from(tm.sites.keys()).map(Number).filter(Number.isFinite)) + 1);
  for (const s of tm.sites.values()) if (isFollowedSite(s) && s.id >= 0 && s.id < followed.length) followed[s.id] = 1;
  const accesses = accessesAtIteration(tm, state.iteration, isFollowedSite);
  tm.raster = rasterize(tm.layout, accesses, (id) => followed[id] === 1, sel === null ? () => true : (p) => sel.has(p));
  tm.followKind = followKindOf(tm);
  const pal = paletteFor(tm.followKind);
  const wrapW = tm.ui.wrap.clientWidth || 800;
  const maxH = tm.parent ? 280 : Math.max(160, Math.min(900, Math.round(window.innerHeight * 0.7)));
  const vm = renderValues(tm);
  const vcol = vm ? valueColors(tm.layout, vm, tm.raster.flags, pal.css.elem) : null;
  tm.geom = drawView(tm.ui.canvas, tm.layout, tm.raster, pal, byProgram() && !vcol, wrapW, maxH, vcol);
  tm.renderMs = performance.now() - t0;
  updateCardText(tm);
}

function updateCardText(tm) {
  const c = tm.raster.counts;
  const lay = tm.layout;
  const parts = [];
  const fl = state.follow ? `line ${state.follow.line}` : 'followed line';
  if (c.touchedF || c.maskedF) {
    parts.push(
      `${fl}: ${c.touchedF.toLocaleString()} element${c.touchedF === 1 ? '' : 's'} touched` +
        (c.maskedF ? `, ${c.maskedF.toLocaleString()} masked-off lane address${c.maskedF === 1 ? '' : 'es'}` : ''),
    );
  } else {
    parts.push(`not accessed on ${fl}`);
  }
  if (state.iteration !== null) parts.push(`iteration ${state.iteration}`);
  if (c.touchedO) parts.push(`other lines: ${c.touchedO.toLocaleString()} touched`);
  const shape = lay.shape;
  if (lay.is1D) parts.push(`${lay.R} row${lay.R === 1 ? '' : 's'} of ${lay.C}`);
  if (lay.nSlices > 1) parts.push(`slice ${lay.slice + 1} of ${lay.nSlices}`);
  if (tm.geom && (tm.geom.x.down > 1 || tm.geom.y.down > 1)) {
    parts.push(`1 pixel = ${tm.geom.y.down}×${tm.geom.x.down} elements`);
  }
  tm.ui.status.textContent = parts.join(' · ');
  void shape;
  // out-of-bounds summary
  const o = c.oobF;
  const oo = c.oobO;
  const totF = o.before + o.past + o.padding;
  const totO = oo.before + oo.past + oo.padding;
  if (totF + totO === 0) {
    tm.ui.oob.textContent = '';
    tm.ui.oob.hidden = true;
    return;
  }
  const desc = (x) =>
    [
      x.past ? `${x.past.toLocaleString()} past the end` : '',
      x.before ? `${x.before.toLocaleString()} before the start` : '',
      x.padding ? `${x.padding.toLocaleString()} in padding` : '',
    ]
      .filter(Boolean)
      .join(', ');
  const segs = [];
  if (totF) segs.push(`${fl}: ${totF.toLocaleString()} out-of-bounds address${totF === 1 ? '' : 'es'} (${desc(o)})`);
  if (totO) segs.push(`other lines: ${totO.toLocaleString()} (${desc(oo)})`);
  const hidden = o.hidden + oo.hidden;
  if (hidden) segs.push(`${hidden.toLocaleString()} not drawn (beyond the band)`);
  tm.ui.oob.textContent = `⚠ out of bounds — ${segs.join('; ')}`;
  tm.ui.oob.hidden = false;
}

function updateHeader() {
  const L = state.launch;
  const F = state.follow && L ? L.lines.get(`${state.follow.file}\n${state.follow.line}`) : null;
  if (F) {
    dom.follow.textContent = `following ${lineLabel(F, true)}`;
    dom.line.value = F.key;
  } else {
    dom.follow.textContent = L && L.lines.size ? 'no line followed' : 'no memory accesses recorded in this launch';
  }
  const cur = state.cursor;
  if (cur && F && !(cur.line >= F.line && cur.line <= F.endLine && (!cur.file || cur.file === F.file))) {
    const curLine = lineAt(cur.file, cur.line);
    dom.cursorNote.textContent = curLine ? '' : `(cursor on line ${cur.line}: no memory access there)`;
  } else {
    dom.cursorNote.textContent = '';
  }
}

function updateLegend() {
  const kinds = new Set((state.launch ? state.launch.tensors : []).filter((t) => !t.error).map((t) => t.followKind));
  const items = [];
  const many = byProgram();
  if (many) {
    items.push({ cls: 'tl-sw-programs', label: 'followed line, coloured by program (see program ids)' });
    items.push({ cls: 'tl-sw-multi', label: 'followed line, several selected programs' });
  } else {
    for (const k of ['load', 'store', 'atomic']) {
      if (kinds.has(k) || (k === 'load' && !kinds.size))
        items.push({ cls: `tl-sw-follow-${k}`, label: `followed line (${k})` });
    }
  }
  items.push({ cls: 'tl-sw-other', label: 'other lines' });
  items.push({ cls: 'tl-sw-masked', label: 'masked-off lanes (address)' });
  items.push({ cls: 'tl-sw-oob', label: 'out-of-bounds lanes' });
  items.push({ cls: 'tl-sw-elem', label: 'element not touched' });
  items.push({ cls: 'tl-sw-band', label: 'outside the tensor (past its edge / padding)' });
  buildLegend(dom.legend, items);
}

// ---------------------------------------------------------------- interaction

/** Program id fields: a value per axis or null (any): the programs whose id matches. */
function pickProgramAxes(vals) {
  const L = state.launch;
  if (!L) return;
  state.pidFields = vals.every((v) => v === null) ? null : vals;
  if (!state.pidFields) {
    state.programs = null;
    renderAll();
    saveState();
    return;
  }
  const s = new Set();
  for (let p = 0; p < L.nPrograms; p++) {
    const id = unlinearPid(p, L.grid);
    if (vals.every((v, k) => v === null || v === id[k])) s.add(p);
  }
  state.programs = s.size ? s : null;
  renderAll();
  saveState();
}

function onPickProgram(p, additive) {
  state.pidFields = null;
  if (p === null) state.programs = null;
  else if (additive) {
    const s = state.programs ? new Set(state.programs) : new Set();
    if (s.has(p)) s.delete(p);
    else s.add(p);
    state.programs = s.size ? s : null;
  } else if (state.programs && state.programs.size === 1 && state.programs.has(p)) {
    state.programs = null; // clicking the only selected program again shows all
  } else {
    state.programs = new Set([p]);
  }
  renderAll();
  saveState();
}

function setFollow(file, line) {
  const L = lineAt(file, line);
  if (!L) return false;
  state.follow = { file: L.file, line: L.line };
  renderAll();
  saveState();
  return true;
}

/** The kernel whose body the cursor is in: after its `def` line, before the next kernel and the launches. */
function kernelForCursor(file, line) {
  const kernels = (state.overview && state.overview.kernels) || [];
  let best = null;
  let end = Infinity;
  for (const k of kernels) {
    for (const l of k.launches || []) if (l.file === file) end = Math.min(end, l.line);
    if (k.file !== file) continue;
    if (k.line > line) {
      end = Math.min(end, k.line);
      continue;
    }
    if (!best || k.line > best.line) best = k;
  }
  return best && line < end && (best.launches || []).length ? best : null;
}

/** A launch whose call is on this line: {kernel, launch}. */
function launchAt(file, line) {
  for (const k of (state.overview && state.overview.kernels) || []) {
    for (const l of k.launches || []) if (l.file === file && l.line === line) return { kernel: k, launch: l };
  }
  return null;
}

async function onEvent(ev) {
  if (ev.type === 'cursor') {
    const file = ev.file ? String(ev.file) : (state.follow && state.follow.file) || '';
    const line = Number(ev.line);
    if (!Number.isFinite(line)) return;
    state.cursor = { file, line };
    if (!state.launch) return;
    if (setFollow(file, line)) return;
    const kernels = state.overview.kernels;
    const at = launchAt(file, line);
    if (at && at.launch !== state.launchInfo) {
      // the cursor is on a launch: show that launch
      dom.kernel.value = String(kernels.indexOf(at.kernel));
      if (at.kernel !== state.kernel) await selectKernel(at.kernel, at.launch.index);
      else {
        dom.launch.value = String(at.launch.index);
        await loadLaunch(at.launch);
      }
      return;
    }
    const k = kernelForCursor(file, line);
    if (k && k !== state.kernel) {
      // the cursor is inside another kernel of this file: switch to it
      dom.kernel.value = String(kernels.indexOf(k));
      state.pendingFollow = { file, line };
      await selectKernel(k, null);
      return;
    }
    updateHeader();
  } else if (ev.type === 'refresh') {
    palettes = new Map();
    await loadOverview(null);
  } else if (ev.type === 'select') {
    state.pendingFollow = {
      kernel: ev.kernel ? String(ev.kernel) : null,
      kernelFile: ev.file || null,
      file: ev.file || '',
      line: Number(ev.line) || 0,
    };
    if (ev.line) state.cursor = { file: String(ev.file || ''), line: Number(ev.line) };
    const kernels = (state.overview && state.overview.kernels) || [];
    const k =
      kernels.find((x) => x.name === ev.kernel && (!ev.file || x.file === ev.file)) ||
      kernels.find((x) => x.name === ev.kernel);
    if (k) {
      dom.kernel.value = String(kernels.indexOf(k));
      await selectKernel(k, state.kernel === k && state.launchInfo ? state.launchInfo.index : null);
    } else {
      await loadOverview(null); // not known yet: results may be newer than ours
    }
  }
}

/** Best (highest-ranked) cell under a canvas pixel. */
function cellUnder(tm, clientX, clientY) {
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

function describeCell(tm, cell) {
  const info = tm.layout.cellInfo(cell);
  const lines = [];
  if (info.kind === 'none')
    return { info, lines: [{ text: `${tm.name}: outside the tensor`, cls: 'tl-tip-title' }], hits: [] };
  if (info.kind === 'element') {
    const idx = tm.layout.unravel(info.index);
    lines.push({ text: `${tm.name}[${idx.join(', ')}]`, cls: 'tl-tip-title' });
    if (tm.layout.nd > 1) lines.push({ text: `flat index ${info.index}, offset ${info.offset}`, cls: 'tl-tip-dim' });
    lines.push({ text: 'value: …', cls: 'tl-tip-value' });
  } else {
    const where =
      info.where === 'past'
        ? `${(info.offset - tm.layout.maxElemOffset).toLocaleString()} past the end`
        : info.where === 'before'
          ? `${(tm.layout.minElemOffset - info.offset).toLocaleString()} before the start`
          : 'padding, not an element';
    lines.push({ text: `${tm.name}: out of bounds`, cls: 'tl-tip-title' });
    lines.push({ text: `offset ${info.offset} (${where})`, cls: 'tl-tip-dim' });
  }
  const hits = accessesAt(tm, info);
  const grid = state.launch.grid;
  const howText = { touched: '', masked: 'masked-off lane of ', oob: 'out-of-bounds lane of ' };
  for (const h of hits) {
    const progs =
      h.programs.length === state.launch.nPrograms && h.programs.length > 1
        ? 'all programs'
        : `program${h.programs.length === 1 ? '' : 's'} ${
            grid[1] > 1 || grid[2] > 1
              ? h.programs
                  .slice(0, 8)
                  .map((p) => pidLabel(p, grid))
                  .join(', ') + (h.programs.length > 8 ? ` … (+${h.programs.length - 8})` : '')
              : rangesLabel(h.programs)
          }`;
    const where =
      state.kernel && h.site.file !== state.kernel.file
        ? `${basename(h.site.file)}:${h.site.line}`
        : `line ${h.site.line}`;
    lines.push({ text: `${where} ${h.site.op}: ${howText[h.how]}${progs}`, cls: `tl-tip-access tl-tip-${h.how}` });
  }
  if (!hits.length) lines.push({ text: 'not accessed by any program', cls: 'tl-tip-dim' });
  const target = revealTarget(tm, hits);
  if (target) lines.push({ text: `click: go to line ${target.line}`, cls: 'tl-tip-hint' });
  return { info, lines, hits };
}

function revealTarget(tm, hits) {
  if (!hits.length) return null;
  const sel = state.programs;
  const score = (h) =>
    (isFollowedSite(h.site) ? 0 : 4) +
    { touched: 0, oob: 1, masked: 2 }[h.how] +
    (sel && !h.programs.some((p) => sel.has(p)) ? 8 : 0);
  const best = hits.slice().sort((a, b) => score(a) - score(b))[0];
  return best.site;
}

function formatValue(v, dtype) {
  if (v === null || v === undefined) return 'not kept';
  if (typeof v === 'number') {
    if (/int|uint|bool/.test(String(dtype)) || (Number.isInteger(v) && Math.abs(v) < 1e15)) return String(v);
    return String(Number(v.toPrecision(6)));
  }
  return String(v);
}

let valueTimer = 0;
function requestValue(tm, index) {
  clearTimeout(valueTimer);
  valueTimer = setTimeout(async () => {
    const start = Math.floor(index / VALUE_BLOCK) * VALUE_BLOCK;
    const count = Math.min(VALUE_BLOCK, tm.layout.numel - start);
    let p = tm.valueCache.get(start);
    if (!p) {
      p = host
        .request('values', { launch: state.launchInfo.index, tensor: tm.index, start, count })
        .then((r) => ({ start: r && typeof r.start === 'number' ? r.start : start, values: (r && r.values) || [] }));
      tm.valueCache.set(start, p);
      p.catch(() => tm.valueCache.delete(start));
    }
    try {
      const r = await p;
      if (hover.tm !== tm || hover.index !== index) return;
      const v = r.values[index - r.start];
      tooltip.setLine('tl-tip-value', `value: ${formatValue(v, tm.meta.dtype)}`);
    } catch (e) {
      if (hover.tm === tm && hover.index === index)
        tooltip.setLine('tl-tip-value', `value: unavailable (${e.message})`);
    }
  }, VALUE_DEBOUNCE_MS);
}

function attachPointer(tm) {
  const cv = tm.ui.canvas;
  cv.addEventListener('mousemove', (ev) => {
    if (!tm.geom) return;
    const cell = cellUnder(tm, ev.clientX, ev.clientY);
    if (cell < 0) {
      tooltip.hide();
      hover.tm = null;
      return;
    }
    if (hover.tm === tm && hover.cell === cell) {
      tooltip.move(ev.clientX, ev.clientY);
      return;
    }
    const d = describeCell(tm, cell);
    hover.tm = tm;
    hover.cell = cell;
    hover.index = d.info.kind === 'element' ? d.info.index : -1;
    tooltip.show(d.lines, ev.clientX, ev.clientY);
    if (hover.index >= 0) requestValue(tm, hover.index);
  });
  cv.addEventListener('mouseleave', () => {
    tooltip.hide();
    hover.tm = null;
    hover.cell = -1;
    clearTimeout(valueTimer);
  });
  cv.addEventListener('click', (ev) => {
    if (!tm.geom) return;
    const cell = cellUnder(tm, ev.clientX, ev.clientY);
    if (cell < 0) return;
    const d = describeCell(tm, cell);
    const site = revealTarget(tm, d.hits);
    if (site) host.reveal(site.file, site.line);
  });
}

// ---------------------------------------------------------------- wiring

dom.kernel.addEventListener('change', () => {
  const k = state.overview && state.overview.kernels[Number(dom.kernel.value)];
  if (k) selectKernel(k, null);
});
dom.launch.addEventListener('change', () => {
  const li = state.kernel && (state.kernel.launches || []).find((l) => String(l.index) === dom.launch.value);
  if (li) loadLaunch(li);
});
dom.line.addEventListener('change', () => {
  const L = state.launch && state.launch.lines.get(dom.line.value);
  if (L) setFollow(L.file, L.line);
});

let resizeQueued = false;
new ResizeObserver(() => {
  if (resizeQueued || !state.launch) return;
  resizeQueued = true;
  requestAnimationFrame(() => {
    resizeQueued = false;
    if (state.launch) renderAll();
  });
}).observe(dom.maps);

new MutationObserver(() => {
  palettes = new Map();
  if (state.launch) renderAll();
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

// ---------------------------------------------------------------- debug / test hook

function tensorModel(t) {
  if (!state.launch) return null;
  return state.launch.tensors.find((x) => x.name === t || x.index === t) || null;
}

/** The model that draws `where` (flat index, per-dim index or {offset}): an N-D tensor's slice. */
function drawnBy(tm, where) {
  if (!tm || !tm.slices) return tm;
  const shape = tm.meta.shape;
  const per = shape[shape.length - 1] * shape[shape.length - 2];
  let i = where;
  if (Array.isArray(where)) {
    i = 0;
    for (let k = 0; k < shape.length; k++) i = i * shape[k] + where[k];
  } else if (where && typeof where === 'object') {
    return tm.slices[0] || null;
  }
  const s = Math.floor(i / per);
  return tm.slices.find((x) => x.layout && x.layout.slice === s) || null;
}

function cellOf(tm, where) {
  const lay = tm.layout;
  if (where && typeof where === 'object' && !Array.isArray(where) && 'offset' in where) {
    return lay.placeOffset(where.offset).cell;
  }
  let i = where;
  if (Array.isArray(where)) {
    i = 0;
    for (let k = 0; k < lay.nd; k++) i = i * lay.shape[k] + where[k];
  }
  return lay.indexToCell(i);
}

function cellPixel(tm, cell) {
  const P = tm.layout.P;
  const r = Math.floor(cell / P);
  const c = cell - r * P;
  const g = tm.geom;
  const x = g.x.up > 1 ? c * g.x.up + Math.floor((g.x.up - 1) / 2) : Math.floor(c / g.x.down);
  const y = g.y.up > 1 ? r * g.y.up + Math.floor((g.y.up - 1) / 2) : Math.floor(r / g.y.down);
  return { x, y };
}

window.__viewer = {
  get idle() {
    return busy === 0 && loadedOnce;
  },
  get eventCount() {
    return eventCount;
  },
  get renderCount() {
    return renderCount;
  },
  get lastRenderMs() {
    return lastRenderMs;
  },
  hostKind: host.kind,
  /** What the cell of `tensor` (name or index) at `index` (flat, per-dim array, or {offset}) is drawn as. */
  cellState(tensor, index) {
    const tm = drawnBy(tensorModel(tensor), index);
    if (tensorModel(tensor) && !tm) return { drawn: 'hidden' };
    if (!tm || !tm.layout) return null;
    const cell = cellOf(tm, index);
    if (cell < 0) return { drawn: 'hidden' };
    const f = tm.raster.flags[cell];
    const { x, y } = cellPixel(tm, cell);
    const px = tm.ui.canvas.getContext('2d').getImageData(x, y, 1, 1).data;
    return {
      drawn: RANK_NAMES[RANK[f]],
      followed: !!(f & F_FOLLOW),
      other: !!(f & F_OTHER),
      maskedFollowed: !!(f & F_MASK_F),
      maskedOther: !!(f & F_MASK_O),
      oobFollowed: !!(f & F_OOB_F),
      oobOther: !!(f & F_OOB_O),
      several: !!(f & F_MULTI),
      program: tm.raster.prog[cell],
      pixel: Array.from(px),
      element: tm.layout.cellInfo(cell).kind === 'element',
    };
  },
  /** Viewport coordinates of the centre of a cell (for hover/click in tests). */
  cellPoint(tensor, index) {
    const tm = drawnBy(tensorModel(tensor), index);
    if (!tm || !tm.layout) return null;
    const cell = cellOf(tm, index);
    if (cell < 0) return null;
    const P = tm.layout.P;
    const r = Math.floor(cell / P);
    const c = cell - r * P;
    const rect = tm.ui.canvas.getBoundingClientRect();
    const sx = rect.width / tm.ui.canvas.width;
    const sy = rect.height / tm.ui.canvas.height;
    const g = tm.geom;
    const x0 = cellToPx(g.x, c),
      x1 = cellToPx(g.x, c + 1);
    const y0 = cellToPx(g.y, r),
      y1 = cellToPx(g.y, r + 1);
    return {
      x: rect.left + ((x0 + Math.max(x1, x0 + 1)) / 2) * sx,
      y: rect.top + ((y0 + Math.max(y1, y0 + 1)) / 2) * sy,
    };
  },
  palette(kind = 'load') {
    const p = paletteFor(kind);
    const un = (v) => [v & 255, (v >>> 8) & 255, (v >>> 16) & 255, v >>> 24];
    return Object.fromEntries(
      ['follow', 'other', 'maskF', 'maskF2', 'oobF', 'oobO', 'elem', 'band', 'bandStripe', 'multi', 'gap']
        .map((k) => [k, un(p[k])])
        .concat([['program', (i) => un(p.progCols[i])]]),
    );
  },
  programColor(p) {
    const c = programColor(p, isDark());
    return c;
  },
  counts(tensor) {
    const tm = tensorModel(tensor);
    return tm && tm.raster ? JSON.parse(JSON.stringify(tm.raster.counts)) : null;
  },
  /** An N-D tensor's shown slices: [{index: [outer..., h], slice}] (null for 1-D / 2-D). */
  slices(tensor) {
    const tm = tensorModel(tensor);
    return tm && tm.slices
      ? tm.slices.map((x) => ({ index: x.sliceIndex, slice: x.layout ? x.layout.slice : null }))
      : null;
  },
  layout(tensor) {
    const tm = (() => {
      const t = tensorModel(tensor);
      return t && t.slices ? t.slices[0] : t;
    })();
    if (!tm || !tm.layout) return null;
    const l = tm.layout;
    return {
      R: l.R,
      C: l.C,
      Bt: l.Bt,
      Bb: l.Bb,
      Br: l.Br,
      nSlices: l.nSlices,
      slice: l.slice,
      geom: { x: tm.geom.x, y: tm.geom.y },
    };
  },
  state() {
    return {
      kernel: state.kernel && state.kernel.name,
      launch: state.launchInfo && state.launchInfo.index,
      follow: state.follow,
      programs: state.programs ? Array.from(state.programs).sort((a, b) => a - b) : null,
      tensors: state.launch ? state.launch.tensors.map((t) => t.name) : [],
      header: dom.follow.textContent,
      values: state.values,
      iteration: state.iteration,
      iterations: followedIterations(),
      playing: state.playing !== null,
      gpu: state.gpu,
    };
  },
  /** Values view of a tensor: the decoded map's summary and the histogram shown. */
  values(tensor) {
    const tm = tensorModel(tensor);
    if (!tm || !tm.valueMaps) return null;
    const e = tm.valueMaps.get(state.values);
    const vm = e && e.ready ? e.vm : null;
    const h = tm.ui && tm.ui.histogram ? tm.ui.histogram.hist : null;
    return vm
      ? {
          none: vm.none || null,
          block: vm.block,
          lo: vm.lo,
          hi: vm.hi,
          cells: vm.q ? vm.q.length : 0,
          histogram: h ? { line: h.line, elements: h.elements, counts: h.counts } : null,
        }
      : null;
  },
  renderTimes() {
    return state.launch ? state.launch.tensors.map((t) => ({ name: t.name, ms: t.renderMs })) : [];
  },
  rerender() {
    if (state.launch) renderAll();
    return lastRenderMs;
  },
};

// ---------------------------------------------------------------- start

host.onEvent((ev) => {
  busy++;
  onEvent(ev)
    .catch((e) => showMessage(e.message, 'error'))
    .finally(() => {
      busy--;
      eventCount++;
    });
});
const saved = restoreState();
tools.vsel.value = state.values;
host.ready();
loadOverview(saved);
