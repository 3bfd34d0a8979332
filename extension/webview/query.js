// Which accesses hit one cell: for the tooltip and for click-to-reveal.

import { setHas } from './encoding.js';

/** @typedef {import('./model.js').SiteModel} SiteModel */
/**
 * The accesses of one site that hit a cell, and how: an active in-bounds lane touched it, or it
 * is the address of an out-of-bounds or a masked-off lane. programs: linear ids.
 * @typedef {{site: Pick<SiteModel, 'id' | 'file' | 'line' | 'op'>, how: 'touched' | 'masked' | 'oob', programs: number[]}} Hit
 */

/**
 * @param {Pick<import('./model.js').TensorModel, 'accesses' | 'sites'>} tm
 * @param {import('./layout.js').CellInfo} info  layout.cellInfo(cell)
 * @returns {Hit[]} grouped by (site, how)
 */
export function accessesAt(tm, info) {
  /** @type {Map<string, Hit>} */
  const groups = new Map();
  if (info.kind === 'none') return [];
  const isElem = info.kind === 'element';
  for (const a of tm.accesses) {
    /** @type {Hit['how'] | null} */
    let how = null;
    if (isElem && setHas(a.touched, info.index)) how = 'touched';
    else if (Number.isFinite(info.offset) && setHas(a.oob, info.offset)) how = 'oob';
    else if (Number.isFinite(info.offset) && setHas(a.masked, info.offset)) how = 'masked';
    if (!how) continue;
    const key = `${a.site}\n${how}`;
    let g = groups.get(key);
    if (!g) {
      g = { site: tm.sites.get(a.site) || { id: a.site, line: 0, file: '', op: '?' }, how, programs: [] };
      groups.set(key, g);
    }
    g.programs.push(a.prog);
  }
  const order = { touched: 0, oob: 1, masked: 2 };
  return Array.from(groups.values()).sort(
    (x, y) => order[x.how] - order[y.how] || x.site.line - y.site.line || x.site.id - y.site.id,
  );
}
