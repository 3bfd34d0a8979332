// The page's state and the only code that changes it. Views read `state` and never assign to it, so
// every change of what the page shows starts from a named mutation here, called by the controller
// (viewer.js) or the loader (loader.js). Nothing here touches the DOM or the host: the store can be
// imported under Node.

/** @typedef {import('../src/viewerProtocol').KernelsResult} KernelsResult */
/** @typedef {import('../src/viewerProtocol').Kernel} Kernel */
/** @typedef {import('../src/viewerProtocol').Launch} Launch */
/** @typedef {import('../src/viewerProtocol').PerformanceResult} PerformanceResult */
/** @typedef {import('../src/viewerProtocol').DotsResult} DotsResult */
/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').LineModel} LineModel */
/** @typedef {import('./model.js').Failed} Failed */
/** @typedef {{file: string, line: number}} SourceLine */
/**
 * A line to follow once its launch is in; from the host's select event also the kernel to show.
 * @typedef {{file: string, line: number, kernel?: string | null, kernelFile?: string | null}} PendingFollow
 */
/**
 * The loaded launch (derive.js launchModel).
 * @typedef {object} LaunchModel
 * @property {Launch} info  its overview entry
 * @property {number[]} grid  3 axes
 * @property {number} nPrograms
 * @property {TensorModel[]} tensors
 * @property {Map<string, LineModel>} lines  by `${file}\n${line}`
 */
/** @typedef {'off' | 'after' | 'before'} ValuesMode */
/**
 * A tensor's saved view, by name: 1-D row width; N-D outer indices and first slice shown.
 * @typedef {{wrap?: number, slice?: number, outer?: number[], first?: number}} SavedView
 */
/**
 * @typedef {object} State
 * @property {KernelsResult | null} overview
 * @property {Kernel | null} kernel
 * @property {Launch | null} launchInfo
 * @property {LaunchModel | null} launch
 * @property {SourceLine | null} follow
 * @property {SourceLine | null} cursor
 * @property {Set<number> | null} programs
 * @property {(number | null)[] | null} pidFields
 * @property {Record<string, ProgramChoice>} programsByKernel  the other kernels' selections, by kernelKey
 * @property {Record<string, SavedView>} views
 * @property {PendingFollow | null} pendingFollow
 * @property {ValuesMode} values
 * @property {number | null} iteration
 * @property {ReturnType<typeof setInterval> | null} playing
 * @property {string} gpu
 * @property {PerformanceResult | Failed | null} perf
 * @property {DotsResult | Failed | null} dots
 */
/**
 * A kernel's program selection, kept while another kernel is shown.
 * @typedef {{programs: number[] | null, pidFields: (number | null)[] | null}} ProgramChoice
 */
/** @typedef {ReturnType<typeof snapshot>} Snapshot */
/**
 * A snapshot as read back: restore() checks the fields it takes; the kernel and launch are only
 * compared with the overview's.
 * @typedef {{kernel?: unknown, kernelFile?: unknown, launch?: unknown}} SavedSelection
 */

/**
 * What a fresh page starts with (the tests reset the store to it).
 * @returns {State}
 */
export function initialState() {
  return {
    overview: null, // the host's kernels overview
    kernel: null, // kernel entry of the overview
    launchInfo: null, // launch entry of the overview (set when its load starts)
    launch: null, // loaded launch model (derive.js launchModel)
    follow: null, // {file, line}
    cursor: null, // last cursor event {file, line}
    programs: null, // null = all, else Set of linear program ids
    pidFields: null, // the program id fields' values (null = "any" per axis) while they chose the programs
    programsByKernel: {}, // kernelKey -> the selection of a kernel not shown now, restored when it is
    views: {}, // tensor name -> {wrap, slice, outer, first}
    pendingFollow: null, // a line (and kernel) to follow once its launch is loaded
    values: 'off', // Values: off | after | before
    iteration: null, // Iteration of the followed line's loop (null = all)
    playing: null, // interval id while the iteration plays
    gpu: 'h100', // Performance: the GPU of the roofline estimate
    perf: null, // performance of the launch (host answer) or {error}
    dots: null, // tl.dot executions of the launch or {error}
  };
}

/** @type {State} */
export const state = initialState();

// Counters the test hook reads (tests wait for `busy === 0 && loadedOnce`). loadSeq tells a load's
// answer from a later one's: each load takes a number and drops its result when a newer one began.
/** @type {{loadSeq: number, busy: number, renderCount: number, eventCount: number, loadedOnce: boolean, lastRenderMs: number}} */
export const page = { loadSeq: 0, busy: 0, renderCount: 0, eventCount: 0, loadedOnce: false, lastRenderMs: 0 };

// The cell under the pointer: a value answer that arrives after the pointer moved on is dropped.
/** @type {{tm: TensorModel | null, cell: number, index: number}} */
export const hover = { tm: null, cell: -1, index: -1 };

// ---------------------------------------------------------------- load bookkeeping

export function nextLoad() {
  return ++page.loadSeq;
}
/** @param {number} seq */
export function isCurrent(seq) {
  return seq === page.loadSeq;
}
export function beginWork() {
  page.busy++;
}
export function endWork() {
  page.busy--;
}
export function markLoaded() {
  page.loadedOnce = true;
}
export function countRender() {
  page.renderCount++;
}
/** @param {number} ms  how long the render took */
export function rendered(ms) {
  page.lastRenderMs = ms;
  page.renderCount++;
}
export function countEvent() {
  page.eventCount++;
}

// ---------------------------------------------------------------- what is loaded

/** @param {KernelsResult} ov */
export function setOverview(ov) {
  state.overview = ov;
}
/**
 * The key a kernel's program selection is kept under: its name and file.
 * @param {{name: string, file: string | null}} k
 */
export function kernelKey(k) {
  return `${k.file || ''}\n${k.name}`;
}

/**
 * Show kernel `k`. The program selection is per kernel: another kernel's is put aside under its key
 * and `k`'s own comes back (none: all programs); the same kernel again (a new run) keeps it.
 * @param {Kernel} k
 */
export function setKernel(k) {
  const before = state.kernel;
  state.kernel = k;
  if (before && kernelKey(before) === kernelKey(k)) return;
  if (before) state.programsByKernel[kernelKey(before)] = currentChoice();
  const mine = state.programsByKernel[kernelKey(k)];
  if (mine) {
    delete state.programsByKernel[kernelKey(k)];
    state.programs = mine.programs ? new Set(mine.programs) : null;
    state.pidFields = mine.pidFields;
  } else if (before) {
    state.programs = null; // a kernel seen for the first time: all its programs
    state.pidFields = null;
  } // else the page's first kernel: the selection restore() read back stays
}

/** @returns {ProgramChoice} */
function currentChoice() {
  return { programs: state.programs ? Array.from(state.programs) : null, pidFields: state.pidFields };
}
/** @param {Launch} li */
export function setLaunchInfo(li) {
  state.launchInfo = li;
}
export function clearLaunch() {
  state.launch = null;
  state.launchInfo = null;
}
/**
 * @param {PerformanceResult | Failed} perf
 * @param {DotsResult | Failed} dots
 */
export function setExtras(perf, dots) {
  state.perf = perf;
  state.dots = dots;
}

/**
 * A new launch: the program selection keeps only the programs it has.
 * @param {LaunchModel} launch
 */
export function setLaunch(launch) {
  state.launch = launch;
  if (state.programs) {
    for (const p of Array.from(state.programs)) if (p >= launch.nPrograms) state.programs.delete(p);
    if (!state.programs.size) state.programs = null;
  }
}

// ---------------------------------------------------------------- what is selected

/** @param {SourceLine | null} follow */
export function setFollow(follow) {
  state.follow = follow;
}
/**
 * The line chosen for a new launch: a pending request is used up by it.
 * @param {SourceLine | null} follow
 */
export function settleFollow(follow) {
  state.pendingFollow = null;
  state.follow = follow;
}
/** @param {SourceLine} cursor */
export function setCursor(cursor) {
  state.cursor = cursor;
}
/** @param {PendingFollow | null} pending */
export function setPendingFollow(pending) {
  state.pendingFollow = pending;
}
/** @param {Set<number> | null} programs  null: all */
export function selectPrograms(programs) {
  state.programs = programs;
}
/** @param {(number | null)[] | null} fields */
export function setPidFields(fields) {
  state.pidFields = fields;
}
/** @param {ValuesMode} v */
export function setValuesMode(v) {
  state.values = v;
}
/** @param {number | null} i  null: all iterations */
export function setIteration(i) {
  state.iteration = i;
}
/** @param {ReturnType<typeof setInterval> | null} id */
export function setPlaying(id) {
  state.playing = id;
}
/** @param {string} g */
export function setGpu(g) {
  state.gpu = g;
}
/**
 * @param {string} name
 * @param {SavedView} patch
 */
export function patchView(name, patch) {
  state.views[name] = { ...(state.views[name] || {}), ...patch };
}
/**
 * A 1-D tensor's row width: its layout is rebuilt on the next render.
 * @param {TensorModel} tm
 * @param {number} wrap
 */
export function setWrap(tm, wrap) {
  tm.view.wrap = wrap;
  patchView(tm.name, { wrap });
  tm.layout = null;
}

/**
 * @param {TensorModel} tm
 * @param {number} cell
 * @param {number} index  the element's flat index, -1 for a cell outside the tensor
 */
export function hoverCell(tm, cell, index) {
  hover.tm = tm;
  hover.cell = cell;
  hover.index = index;
}
export function clearHover() {
  hover.tm = null;
  hover.cell = -1;
  hover.index = -1;
}

// ---------------------------------------------------------------- persistence

/** @typedef {{getState(): unknown, setState(s: unknown): void}} Storage */

/** @type {Storage} */
let storage = { getState: () => null, setState: () => {} };

/**
 * Where save() and restore() keep the selection: the host (VS Code's webview state, localStorage).
 * @param {Storage} s
 */
export function connectStorage(s) {
  storage = s;
}

/**
 * The part of the state that survives a reload of the page.
 * @param {State} [s]
 */
export function snapshot(s = state) {
  return {
    kernel: s.kernel ? s.kernel.name : null,
    kernelFile: s.kernel ? s.kernel.file : null,
    launch: s.launchInfo ? s.launchInfo.index : null,
    follow: s.follow,
    programs: s.programs ? Array.from(s.programs) : null,
    programsByKernel: s.programsByKernel,
    views: s.views,
    values: s.values,
    gpu: s.gpu,
  };
}

export function save() {
  storage.setState(snapshot());
}

/**
 * Takes back what a snapshot kept, each field only when it has the right shape (an older page may
 * have saved it). Returns the snapshot (its kernel and launch are picked once the overview is in).
 * @returns {SavedSelection | null}
 */
export function restore() {
  const got = storage.getState();
  if (!got || typeof got !== 'object') return null;
  const s = /** @type {Record<string, any>} */ (got);
  if (s.follow && typeof s.follow.line === 'number')
    state.follow = { file: String(s.follow.file || ''), line: s.follow.line };
  if (Array.isArray(s.programs)) state.programs = new Set(s.programs.filter(Number.isInteger));
  if (s.programsByKernel && typeof s.programsByKernel === 'object') {
    /** @type {Record<string, ProgramChoice>} */
    const by = {};
    for (const [key, c] of Object.entries(s.programsByKernel)) {
      if (!c || typeof c !== 'object') continue;
      const programs = Array.isArray(c.programs) ? c.programs.filter(Number.isInteger) : null;
      const fields = Array.isArray(c.pidFields)
        ? c.pidFields.map((/** @type {unknown} */ v) => (Number.isInteger(v) ? /** @type {number} */ (v) : null))
        : null;
      by[key] = { programs, pidFields: fields };
    }
    state.programsByKernel = by;
  }
  if (s.views && typeof s.views === 'object') state.views = s.views;
  if (['off', 'after', 'before'].includes(s.values)) state.values = s.values;
  if (typeof s.gpu === 'string') state.gpu = s.gpu;
  return s;
}
