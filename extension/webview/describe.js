// The words the page shows for the state: picker labels, the header, the legend, a card's status
// line, the tooltip of a cell. Pure functions of the state they are given (text, no DOM), so that
// Node tests can read them.

import { byProgram, lineAt, placesOf, revealTarget } from './derive.js';
import { accessesAt } from './query.js';
import { NO_PLACES, gridLabel, pidLabel, placeFull, placeName, rangesLabel } from './ui.js';

/** @typedef {import('./store.js').State} State */
/** @typedef {import('./store.js').LaunchModel} LaunchModel */
/** @typedef {import('./store.js').Kernel} Kernel */
/** @typedef {import('./store.js').Launch} Launch */
/** @typedef {import('./store.js').KernelsResult} KernelsResult */
/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').LineModel} LineModel */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./raster.js').Counts} Counts */
/** @typedef {import('./draw.js').ViewGeometry} ViewGeometry */
/** @typedef {import('./derive.js').SliceSpec} SliceSpec */
/** @typedef {import('./query.js').Hit} Hit */
/** @typedef {import('./ui.js').TipLine} TipLine */

/**
 * A number for a sentence: 4 significant digits.
 * @param {unknown} v
 */
export function fmtNum(v) {
  return typeof v === 'number' ? String(Number(v.toPrecision(4))) : String(v);
}

/**
 * A tensor element's value for the tooltip: integers exactly, floats to 6 significant digits.
 * @param {unknown} v  the host's value (a number, or a string for what JSON cannot hold)
 * @param {string | undefined} dtype
 */
export function formatValue(v, dtype) {
  if (v === null || v === undefined) return 'not kept';
  if (typeof v === 'number') {
    if (/int|uint|bool/.test(String(dtype)) || (Number.isInteger(v) && Math.abs(v) < 1e15)) return String(v);
    return String(Number(v.toPrecision(6)));
  }
  return String(v);
}

// ---------------------------------------------------------------- pickers and header

/**
 * @param {Kernel} k
 * @param {import('./ui.js').Places} [places]
 */
export function kernelLabel(k, places = NO_PLACES) {
  return `${k.name}  (${placeFull(places, k.file, k.line)})${(k.launches || []).length ? '' : ' — not launched'}`;
}

/**
 * @param {Launch} l
 * @param {import('./ui.js').Places} [places]
 */
export function launchLabel(l, places = NO_PLACES) {
  return `launch ${l.index}: grid ${gridLabel(l.grid)} — ${placeFull(places, l.file, l.line)}`;
}

/** @param {KernelsResult | null} ov */
export function noKernelsMessage(ov) {
  return ov && ov.status && ov.status !== 'ok'
    ? `No kernel launches recorded (${ov.status}).`
    : 'No kernel launches recorded for this file.';
}

/**
 * An access line and what it does; a line of another file than the kernel's is named with its file,
 * a notebook's line with its cell.
 * @param {State} state
 * @param {LineModel} L
 * @param {boolean} withFile
 */
export function lineLabel(state, L, withFile) {
  const items = L.items.map((it) => `${it.op}(${it.tensor} …)`).join('; ');
  return `${placeName(placesOf(state), L.file, L.line, withFile)}: ${items}`;
}

/**
 * The header row: the followed line (lineKey: the line picker's value, null when none is followed)
 * and a note when the cursor is on a line without memory access.
 * @param {State} state
 */
export function headerText(state) {
  const L = state.launch;
  const F = state.follow && L ? L.lines.get(`${state.follow.file}\n${state.follow.line}`) : null;
  let follow;
  if (F) follow = `following ${lineLabel(state, F, true)}`;
  else follow = L && L.lines.size ? 'no line followed' : 'no memory accesses recorded in this launch';
  const cur = state.cursor;
  let cursorNote = '';
  if (cur && F && !(cur.line >= F.line && cur.line <= F.endLine && (!cur.file || cur.file === F.file))) {
    const curLine = lineAt(state, cur.file, cur.line);
    cursorNote = curLine ? '' : `(cursor on ${placeName(placesOf(state), cur.file, cur.line)}: no memory access there)`;
  }
  return { follow, lineKey: F ? F.key : null, cursorNote };
}

/**
 * Legend entries for what the maps show now: [{cls, label}].
 * @param {State} state
 */
export function legendItems(state) {
  const kinds = new Set((state.launch ? state.launch.tensors : []).filter((t) => !t.error).map((t) => t.followKind));
  /** @type {{cls: string, label: string}[]} */
  const items = [];
  if (byProgram(state)) {
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
  return items;
}

// ---------------------------------------------------------------- tensor cards

/**
 * @param {TensorModel} tm
 * @param {number[]} idx  the slice's leading indices
 */
export function sliceLabel(tm, idx) {
  return `${tm.name}[${idx.join(', ')}, :, :]`;
}

/**
 * Under an N-D tensor's slices: which of them are shown, out of how many.
 * @param {TensorModel} tm
 * @param {SliceSpec} sp
 * @param {number} maxSlices
 */
export function sliceNote(tm, sp, maxSlices) {
  return (
    `${sp.lead.length + 2}-D: slices ${tm.name}[${[...sp.outer, `${sp.first}:${sp.first + sp.count}`].join(', ')}, :, :]` +
    ` of ${sp.inner} along dim ${sp.lead.length - 1}` +
    (sp.count < sp.inner ? ` (${maxSlices} at a time: pick where they start)` : '')
  );
}

/**
 * A drawn card's status line and out-of-bounds line (oob: null when there is nothing out of bounds).
 * @param {State} state
 * @param {Counts} c  the raster's
 * @param {Layout} lay
 * @param {ViewGeometry | undefined} geom  how it was drawn
 */
export function cardText(state, c, lay, geom) {
  /** @type {string[]} */
  const parts = [];
  const fl = state.follow ? placeName(placesOf(state), state.follow.file, state.follow.line, false) : 'followed line';
  if (c.touchedF || c.maskedF) {
    parts.push(
      `${fl}: ${c.touchedF.toLocaleString()} element${c.touchedF === 1 ? '' : 's'} touched` +
        (c.lanesF ? ` by ${c.lanesF.toLocaleString()} active lane${c.lanesF === 1 ? '' : 's'}` : '') +
        (c.maskedF ? `, ${c.maskedF.toLocaleString()} masked-off lane address${c.maskedF === 1 ? '' : 'es'}` : ''),
    );
  } else {
    parts.push(`not accessed on ${fl}`);
  }
  if (state.iteration !== null) parts.push(`iteration ${state.iteration}`);
  if (c.touchedO)
    parts.push(`other lines: ${c.touchedO.toLocaleString()} element${c.touchedO === 1 ? '' : 's'} touched`);
  if (lay.is1D) parts.push(`${lay.R} row${lay.R === 1 ? '' : 's'} of ${lay.C}`);
  if (lay.nSlices > 1) parts.push(`slice ${lay.slice + 1} of ${lay.nSlices}`);
  if (geom && (geom.x.down > 1 || geom.y.down > 1)) {
    parts.push(`1 pixel = ${geom.y.down}×${geom.x.down} elements`);
  }
  const status = parts.join(' · ');
  const o = c.oobF;
  const oo = c.oobO;
  const totF = o.before + o.past + o.padding;
  const totO = oo.before + oo.past + oo.padding;
  if (totF + totO === 0) return { status, oob: null };
  const desc = (/** @type {import('./raster.js').OobCounts} */ x) =>
    [
      x.past ? `${x.past.toLocaleString()} past the end` : '',
      x.before ? `${x.before.toLocaleString()} before the start` : '',
      x.padding ? `${x.padding.toLocaleString()} in padding` : '',
    ]
      .filter(Boolean)
      .join(', ');
  /** @type {string[]} */
  const segs = [];
  if (totF) segs.push(`${fl}: ${totF.toLocaleString()} out-of-bounds address${totF === 1 ? '' : 'es'} (${desc(o)})`);
  if (totO) segs.push(`other lines: ${totO.toLocaleString()} (${desc(oo)})`);
  const hidden = o.hidden + oo.hidden;
  if (hidden) segs.push(`${hidden.toLocaleString()} not drawn (beyond the band)`);
  return { status, oob: `⚠ out of bounds — ${segs.join('; ')}` };
}

// ---------------------------------------------------------------- tooltip

const HOW_TEXT = { touched: '', masked: 'masked-off lane of ', oob: 'out-of-bounds lane of ' };

/**
 * The tooltip of a cell: lines [{text, cls}] (the value line is filled in when the host answers),
 * with the cell's layout info and the accesses that hit it.
 * @param {State} state
 * @param {Pick<TensorModel, 'name' | 'accesses' | 'sites'> & {layout: Layout}} tm
 * @param {number} cell
 * @returns {{info: import('./layout.js').CellInfo, lines: TipLine[], hits: Hit[]}}
 */
export function describeCell(state, tm, cell) {
  const info = tm.layout.cellInfo(cell);
  /** @type {TipLine[]} */
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
  // a drawn cell is one of the loaded launch's
  const launch = /** @type {LaunchModel} */ (state.launch);
  const grid = launch.grid;
  for (const h of hits) {
    const progs =
      h.programs.length === launch.nPrograms && h.programs.length > 1
        ? 'all programs'
        : `program${h.programs.length === 1 ? '' : 's'} ${
            grid[1] > 1 || grid[2] > 1
              ? h.programs
                  .slice(0, 8)
                  .map((p) => pidLabel(p, grid))
                  .join(', ') + (h.programs.length > 8 ? ` … (+${h.programs.length - 8})` : '')
              : rangesLabel(h.programs)
          }`;
    const where = placeName(placesOf(state), h.site.file, h.site.line);
    lines.push({ text: `${where} ${h.site.op}: ${HOW_TEXT[h.how]}${progs}`, cls: `tl-tip-access tl-tip-${h.how}` });
  }
  if (!hits.length) lines.push({ text: 'not accessed by any program', cls: 'tl-tip-dim' });
  const target = revealTarget(state, hits);
  if (target)
    lines.push({ text: `click: go to ${placeName(placesOf(state), target.file, target.line)}`, cls: 'tl-tip-hint' });
  return { info, lines, hits };
}
