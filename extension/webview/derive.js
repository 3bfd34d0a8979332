// Questions about the page's state: which line is followed, which kernel or launch the cursor is
// on, which programs are picked, which slices an N-D tensor shows. Pure functions of the state they
// are given (no DOM, no host), so that Node tests can ask them of a hand-made state.

import { defaultWrap } from './layout.js';
import { buildTensorModel, collectLines, iterationCount } from './model.js';
import { unlinearPid } from './ui.js';

/** @typedef {import('./ui.js').Places} Places */

/** @typedef {import('./store.js').State} State */
/** @typedef {import('./store.js').LaunchModel} LaunchModel */
/** @typedef {import('./store.js').SourceLine} SourceLine */
/** @typedef {import('./store.js').SavedView} SavedView */
/** @typedef {import('./store.js').SavedSelection} SavedSelection */
/** @typedef {import('./store.js').Kernel} Kernel */
/** @typedef {import('./store.js').Launch} Launch */
/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').TensorMapAnswer} TensorMapAnswer */
/** @typedef {import('./model.js').LineModel} LineModel */
/** @typedef {import('./query.js').Hit} Hit */
/**
 * The slices an N-D tensor shows: leading dims `lead`, outer indices chosen, `count` slices of the
 * last leading dim (of `inner`) from `first`; base: the linear slice index of the first's row.
 * @typedef {{lead: number[], inner: number, outer: number[], first: number, count: number, base: number}} SliceSpec
 */

/** An N-D tensor shows at most this many 2-D slices at a time. */
export const MAX_SLICES = 16;

// ---------------------------------------------------------------- the launch model

/**
 * A tensor's view (row width, slice) as last saved for its name, or the default.
 * @param {Record<string, SavedView>} views
 * @param {TensorModel} tm
 * @returns {import('./model.js').TensorView}
 */
export function viewFor(views, tm) {
  /** @type {SavedView} */
  const saved = views[tm.name] || {};
  const shape = tm.meta.shape || [];
  const numel = shape.reduce((a, b) => a * b, 1);
  return {
    wrap: shape.length === 1 ? (saved.wrap && saved.wrap > 0 ? saved.wrap : defaultWrap(numel)) : undefined,
    slice: shape.length > 2 ? saved.slice || 0 : 0,
  };
}

/**
 * The model of a launch from its overview entry and its tensors' access maps.
 * @param {Launch} li
 * @param {TensorMapAnswer[]} maps
 * @param {Record<string, SavedView>} views
 * @returns {LaunchModel}
 */
export function launchModel(li, maps, views) {
  const grid = (li.grid || [1, 1, 1]).concat([1, 1, 1]).slice(0, 3);
  const nPrograms = li.programs || grid[0] * grid[1] * grid[2];
  const tensors = maps.map((m, i) => {
    const tm = buildTensorModel(m, i, grid);
    if (!tm.error) tm.view = viewFor(views, tm);
    return tm;
  });
  return { info: li, grid, nPrograms, tensors, lines: collectLines(tensors) };
}

// ---------------------------------------------------------------- the followed line

/**
 * @param {State} state
 * @param {{file: string, line: number}} s  a site
 */
export function isFollowedSite(state, s) {
  return !!state.follow && s.file === state.follow.file && s.line === state.follow.line;
}

/**
 * isFollowedSite as a one-argument test, for the model's and the raster's callbacks.
 * @param {State} state
 */
export function followTest(state) {
  return (/** @type {{file: string, line: number}} */ s) => isFollowedSite(state, s);
}

/**
 * The innermost access line of the launch that spans `line` (a multi-line call spans several).
 * @param {State} state
 * @param {string | null | undefined} file  none: any file
 * @param {number} line
 */
export function lineAt(state, file, line) {
  if (!state.launch) return null;
  /** @type {LineModel | null} */
  let best = null;
  for (const L of state.launch.lines.values()) {
    if (file && L.file !== file) continue;
    if (line >= L.line && line <= L.endLine && (!best || L.line > best.line)) best = L;
  }
  return best;
}

/**
 * The line to follow in a newly loaded launch: the one asked for, else the cursor's, else the one
 * followed before, else the launch's first; null when the launch has no access.
 * @param {State} state
 * @returns {SourceLine | null}
 */
export function chooseFollow(state) {
  if (!state.launch) return null;
  const pend = state.pendingFollow;
  /** @type {SourceLine[]} */
  const cand = [];
  if (pend && pend.line) cand.push(pend);
  if (state.cursor) cand.push(state.cursor);
  if (state.follow) cand.push(state.follow);
  for (const c of cand) {
    const L = lineAt(state, c.file, c.line);
    if (L) return { file: L.file, line: L.line };
  }
  const first = state.launch.lines.values().next().value;
  return first ? { file: first.file, line: first.line } : null;
}

/**
 * Colours of a tensor's followed accesses: a line that only stores or only does atomics has its own.
 * @param {State} state
 * @param {TensorModel} tm
 */
export function followKindOf(state, tm) {
  /** @type {Set<string>} */
  const kinds = new Set();
  for (const s of tm.sites.values()) if (isFollowedSite(state, s)) kinds.add(s.kind);
  if (kinds.size === 1) {
    const k = kinds.values().next().value;
    if (k === 'store' || k === 'atomic') return k;
  }
  return 'load';
}

// ---------------------------------------------------------------- iterations

/** @param {State} state */
export function followedIterations(state) {
  return state.launch ? iterationCount(state.launch.tensors, followTest(state)) : 0;
}

/**
 * The iteration to show once the followed line has `n` (a line outside a loop has no slider).
 * @param {number | null} iteration
 * @param {number} n
 */
export function clampedIteration(iteration, n) {
  if (n <= 1) return null;
  if (iteration !== null && iteration >= n) return n - 1;
  return iteration;
}

// ---------------------------------------------------------------- programs

/**
 * Colour followed cells by program: more than one program is shown.
 * @param {State} state
 */
export function byProgram(state) {
  const L = state.launch;
  if (!L) return false;
  return state.programs === null ? L.nPrograms > 1 : state.programs.size > 1;
}

/**
 * The one selected program (linear id), or null when none or several are selected.
 * @param {State} state
 * @returns {number | null}
 */
export function singleProgram(state) {
  return state.programs && state.programs.size === 1
    ? /** @type {number} */ (state.programs.values().next().value)
    : null;
}

/**
 * What the program id fields show: the axes picked there (some may be "any"), else the one program's id.
 * @param {State} state
 */
export function pidFieldsShown(state) {
  const one = singleProgram(state);
  if (state.pidFields && state.programs) return state.pidFields;
  return one === null || !state.launch ? null : unlinearPid(one, state.launch.grid);
}

/**
 * The programs whose id matches the fields (null: any value of that axis); null when none does.
 * @param {LaunchModel} launch
 * @param {(number | null)[]} vals
 */
export function programsMatching(launch, vals) {
  /** @type {Set<number>} */
  const s = new Set();
  for (let p = 0; p < launch.nPrograms; p++) {
    const id = unlinearPid(p, launch.grid);
    if (vals.every((v, k) => v === null || v === id[k])) s.add(p);
  }
  return s.size ? s : null;
}

/**
 * The selection after a click on program chip `p` (null: "all"): a plain click shows only that
 * program, or all of them again when it was the only one; shift/ctrl adds or removes it.
 * @param {Set<number> | null} programs
 * @param {number | null} p
 * @param {boolean} additive
 * @returns {Set<number> | null}
 */
export function toggledPrograms(programs, p, additive) {
  if (p === null) return null;
  if (additive) {
    /** @type {Set<number>} */
    const s = programs ? new Set(programs) : new Set();
    if (s.has(p)) s.delete(p);
    else s.add(p);
    return s.size ? s : null;
  }
  if (programs && programs.size === 1 && programs.has(p)) return null;
  return new Set([p]);
}

// ---------------------------------------------------------------- kernels and launches

/**
 * A kernel by name, in `file` when there is one of that name there.
 * @param {Kernel[]} kernels
 * @param {unknown} name
 * @param {unknown} file
 */
export function findKernel(kernels, name, file) {
  return kernels.find((x) => x.name === name && (!file || x.file === file)) || kernels.find((x) => x.name === name);
}

/**
 * The kernel to show once the overview is in: the one asked for, else the saved or shown one, else the first launched.
 * @param {State} state
 * @param {Kernel[]} kernels  not empty
 * @param {SavedSelection | null} saved
 * @returns {Kernel}
 */
export function kernelToShow(state, kernels, saved) {
  const pendingSel = state.pendingFollow;
  const want =
    pendingSel && pendingSel.kernel
      ? pendingSel
      : saved || (state.kernel && { kernel: state.kernel.name, kernelFile: state.kernel.file });
  let k = null;
  if (want && want.kernel) k = findKernel(kernels, want.kernel, want.kernelFile);
  if (!k) k = kernels.find((x) => (x.launches || []).length) || kernels[0];
  return k;
}

/**
 * The launch index of kernel `k` to show: the saved one, else the one shown (a refresh keeps it); null: the first.
 * @param {State} state
 * @param {Kernel} k
 * @param {SavedSelection | null} saved
 * @returns {number | null}
 */
export function launchToShow(state, k, saved) {
  if (saved && saved.kernel === k.name && typeof saved.launch === 'number') return saved.launch;
  if (!state.pendingFollow && state.kernel && state.kernel.name === k.name && state.launchInfo)
    return state.launchInfo.index;
  return null;
}

/**
 * The kernel whose body the cursor is in: after its `def` line, before the next kernel and the launches.
 * @param {State} state
 * @param {string} file
 * @param {number} line
 */
export function kernelForCursor(state, file, line) {
  const kernels = (state.overview && state.overview.kernels) || [];
  /** @type {Kernel | null} */
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

/**
 * A launch whose call is on this line: {kernel, launch}.
 * @param {State} state
 * @param {string} file
 * @param {number} line
 */
export function launchAt(state, file, line) {
  for (const k of (state.overview && state.overview.kernels) || []) {
    for (const l of k.launches || []) if (l.file === file && l.line === line) return { kernel: k, launch: l };
  }
  return null;
}

// ---------------------------------------------------------------- cells and slices

/**
 * The source line a click on a cell reveals, among the accesses that hit it: the followed line's
 * first, touched before out-of-bounds before masked-off, selected programs' before the others'.
 * @param {State} state
 * @param {Hit[]} hits
 */
export function revealTarget(state, hits) {
  if (!hits.length) return null;
  const sel = state.programs;
  const score = (/** @type {Hit} */ h) =>
    (isFollowedSite(state, h.site) ? 0 : 4) +
    { touched: 0, oob: 1, masked: 2 }[h.how] +
    (sel && !h.programs.some((p) => sel.has(p)) ? 8 : 0);
  const best = hits.slice().sort((a, b) => score(a) - score(b))[0];
  return best.site;
}

/**
 * The slices shown: the last leading dimension's indices [first, first + 16), for the outer indices chosen.
 * @param {State} state
 * @param {TensorModel} tm  an N-D tensor (shape known: it has an access map)
 * @returns {SliceSpec}
 */
export function sliceSpec(state, tm) {
  const shape = /** @type {number[]} */ (tm.meta.shape);
  const lead = shape.slice(0, -2);
  const inner = lead[lead.length - 1];
  /** @type {SavedView} */
  const saved = state.views[tm.name] || {};
  const outer = lead.slice(0, -1).map((d, k) => Math.max(0, Math.min(d - 1, (saved.outer || [])[k] | 0)));
  const first = Math.max(0, Math.min(Math.max(0, inner - 1), /** @type {number} */ (saved.first) | 0));
  let o = 0;
  for (let k = 0; k < outer.length; k++) o = o * lead[k] + outer[k];
  return { lead, inner, outer, first, count: Math.min(MAX_SLICES, inner - first), base: o * inner };
}

/**
 * Redraw the Performance panel only when its launch, GPU or load changed (it keeps its scroll otherwise).
 * @param {State} state
 * @param {number} loadSeq
 */
export function perfKey(state, loadSeq) {
  return `${state.launchInfo ? state.launchInfo.index : ''}/${state.gpu}/${loadSeq}`;
}

/**
 * How the page names the shown kernel's source lines (ui.js placeName, placeCell).
 * @param {State} state
 * @returns {Places}
 */
export function placesOf(state) {
  const names = state.overview && Array.isArray(state.overview.lineNames) ? state.overview.lineNames : [];
  return { kernelFile: state.kernel ? state.kernel.file : null, names };
}
