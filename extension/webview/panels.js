// Views of the new panels: Values / Iteration / program id tools, the program's memory
// operations, tl.dot tiles, and Performance. DOM only: view-panels.js and the controller (viewer.js)
// pass data and callbacks in. Text from user code goes through textContent (el()).

import { fmtNum } from './describe.js';
import { isFailed } from './model.js';
import { drawTile } from './values.js';
import { el, fillSelect, placeCell, placeName } from './ui.js';

/** @typedef {import('./ui.js').Places} Places */

/** @typedef {import('../src/viewerProtocol').PerformanceResult} PerformanceResult */
/** @typedef {import('../src/viewerProtocol').LineMetrics} LineMetrics */
/** @typedef {import('../src/viewerProtocol').Operand} Operand */
/** @typedef {Extract<Operand, {linked: true}>} LinkedOperand */
/** @typedef {import('./model.js').ProgramOp} ProgramOp */
/** @typedef {import('./model.js').DotItem} DotItem */
/** @typedef {import('../src/viewerProtocol').Tile} Tile */
/** @typedef {import('../src/viewerProtocol').DotTilesResult | import('./model.js').Failed} TileValues */
/** @typedef {ReturnType<typeof buildTools>} Tools */
/** @typedef {import('./store.js').ValuesMode} ValuesMode */
/** @typedef {import('./model.js').Failed} Failed */

// ---------------------------------------------------------------- tools row

/**
 * The Values select, the Iteration slider with play/pause, the per-axis program id fields.
 * @param {HTMLElement} container
 * @param {object} on
 * @param {(mode: ValuesMode) => void} on.onValues
 * @param {(iteration: number | null) => void} on.onIteration
 * @param {() => void} on.onPlay
 * @param {(vals: (number | null)[]) => void} on.onProgramId  per axis: the id, or null for any
 */
export function buildTools(container, { onValues, onIteration, onPlay, onProgramId }) {
  container.replaceChildren();
  const values = el('label', 'tl-field tl-values');
  values.append(el('span', null, 'Values'));
  const vsel = el('select');
  vsel.id = 'tl-values';
  vsel.setAttribute('aria-label', 'Values');
  fillSelect(
    vsel,
    [
      { value: 'off', label: 'off (accesses)' },
      { value: 'after', label: 'after the launch' },
      { value: 'before', label: 'before the launch' },
    ],
    'off',
  );
  vsel.addEventListener('change', () => onValues(/** @type {ValuesMode} */ (vsel.value)));
  values.append(vsel);

  const iter = el('label', 'tl-field tl-iteration');
  iter.append(el('span', null, 'Iteration'));
  const slider = el('input');
  slider.type = 'range';
  slider.id = 'tl-iteration';
  slider.setAttribute('aria-label', 'Iteration');
  slider.min = '-1';
  slider.max = '-1';
  slider.value = '-1';
  slider.addEventListener('input', () => onIteration(Number(slider.value) < 0 ? null : Number(slider.value)));
  const ilabel = el('span', 'tl-iteration-label', 'all');
  ilabel.id = 'tl-iteration-label';
  const play = el('button', 'tl-play', 'play');
  play.type = 'button';
  play.id = 'tl-play';
  play.addEventListener('click', () => onPlay());
  iter.append(slider, ilabel, play);

  const pid = el('span', 'tl-field tl-pid');
  pid.id = 'tl-pid';
  container.append(values, iter, pid);
  return { vsel, slider, ilabel, play, pid, iter, onProgramId };
}

/**
 * Iteration slider state: n iterations (0 hides it), current (null = all), playing.
 * @param {Tools} tools
 * @param {number} n
 * @param {number | null} current
 * @param {boolean} playing
 */
export function updateIteration(tools, n, current, playing) {
  tools.iter.hidden = n <= 1;
  tools.slider.max = String(Math.max(-1, n - 1));
  tools.slider.value = String(current === null ? -1 : current);
  tools.ilabel.textContent = current === null ? `all ${n} iterations` : `iteration ${current} of ${n}`;
  tools.play.textContent = playing ? 'pause' : 'play';
  tools.play.setAttribute('aria-pressed', String(playing));
}

/**
 * Program id fields, one per grid axis (shown for 2-D and 3-D grids, next to the chips).
 * @param {Tools} tools
 * @param {number[]} grid
 * @param {(number | null)[] | null} pid  per axis: the id shown, or null (empty: any)
 */
export function updateProgramFields(tools, grid, pid) {
  const axes = (grid[2] || 1) > 1 ? 3 : (grid[1] || 1) > 1 ? 2 : 1;
  tools.pid.replaceChildren();
  tools.pid.append(el('span', null, 'program id'));
  for (let k = 0; k < axes; k++) {
    const lab = el('label', 'tl-num');
    lab.append(el('span', null, 'xyz'[k]));
    const inp = el('input');
    inp.type = 'number';
    inp.min = '0';
    inp.max = String((grid[k] || 1) - 1);
    inp.value = pid && pid[k] !== null && pid[k] !== undefined ? String(pid[k]) : '';
    inp.placeholder = 'all';
    inp.dataset.axis = String(k);
    inp.setAttribute('aria-label', `program id ${'xyz'[k]}`);
    inp.addEventListener('change', () => {
      const vals = Array.from(tools.pid.querySelectorAll('input')).map((i) =>
        i.value === '' ? null : Number(i.value),
      );
      tools.onProgramId(vals);
    });
    lab.append(inp);
    tools.pid.append(lab);
  }
}

// ---------------------------------------------------------------- program's memory operations

/**
 * The ordered memory operations of one program; click a row to follow its line at its iteration.
 * @param {HTMLElement} container
 * @param {string} title
 * @param {ProgramOp[] | null} ops  null: no single program is selected
 * @param {Places} places  how lines are named
 * @param {(o: ProgramOp) => void} onPick
 */
export function buildOpsList(container, title, ops, places, onPick) {
  container.replaceChildren();
  container.append(el('h2', 'tl-panel-title', title));
  if (!ops) {
    container.append(
      el('p', 'tl-note', 'Pick one program (a chip or the program id fields) to list its memory operations in order.'),
    );
    return;
  }
  if (!ops.length) {
    container.append(el('p', 'tl-note', 'This program made no memory operation.'));
    return;
  }
  const table = el('table', 'tl-ops');
  const head = el('tr');
  for (const h of ['#', 'line', 'tensor', 'kind', 'lanes', 'iteration']) head.append(el('th', null, h));
  table.append(head);
  ops.forEach((o, i) => {
    const tr = el('tr', `tl-op tl-op-${o.kind}`);
    tr.tabIndex = 0;
    tr.dataset.line = String(o.line);
    const where = placeCell(places, o.file, o.line);
    tr.append(
      el('td', null, String(i + 1)),
      el('td', null, where),
      el('td', null, o.tensor),
      el('td', null, `${o.kind} (${o.op})`),
      el('td', null, `${o.active}/${o.lanes}`),
      el('td', null, o.iterations > 1 ? `${o.iteration} of ${o.iterations}` : '–'),
    );
    tr.addEventListener('click', () => onPick(o));
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') onPick(o);
    });
    table.append(tr);
  });
  container.append(table);
}

// ---------------------------------------------------------------- tl.dot

/**
 * @param {string} label
 * @param {number[]} shape
 * @param {Operand | null} operand  null: the result tile
 * @param {string} cls
 * @param {Places} places  how lines are named
 * @param {Tile | undefined} values  the tile's values (undefined: not kept, or not here yet)
 * @param {(operand: LinkedOperand) => void} onPick
 */
function tileBox(label, shape, operand, cls, places, values, onPick) {
  const box = el('div', `tl-tile ${cls}`);
  const [r, c] = shape;
  // the values, one pixel a cell scaled up, or the operand's colour until they are here
  const pic = values ? el('canvas', 'tl-tile-pic tl-tile-values') : el('div', 'tl-tile-pic');
  if (values && pic instanceof HTMLCanvasElement) {
    drawTile(pic, values);
    const per = values.block[0] * values.block[1] > 1 ? ` (each cell the mean of ${values.block.join('×')})` : '';
    pic.title = `${label}: values ${fmtNum(values.lo)} … ${fmtNum(values.hi)}${per}`;
  }
  // the tile drawn to scale (longest side 96 px), so M x K, K x N and M x N line up as a product
  const scale = 96 / Math.max(r, c, 1);
  pic.style.width = `${Math.max(8, Math.round(c * scale))}px`;
  pic.style.height = `${Math.max(8, Math.round(r * scale))}px`;
  const range = values ? ` · ${fmtNum(values.lo)} … ${fmtNum(values.hi)}` : '';
  box.append(el('div', 'tl-tile-label', `${label}: ${r}×${c}${range}`), pic);
  if (operand && operand.linked) {
    const where = placeName(places, operand.file, operand.line);
    const link = el('button', 'tl-tile-link', `${operand.extent} — ${where}`);
    link.type = 'button';
    link.title = `follow ${where} (${operand.op}) at iteration ${operand.iteration}`;
    link.addEventListener('click', () => onPick(operand));
    box.append(link);
  } else if (operand) {
    box.append(el('div', 'tl-note', operand.why || 'not from a load'));
  }
  return box;
}

/**
 * tl.dot panel: for each dot line, the A, B and C/acc tiles of the selected program at the iteration.
 * @param {HTMLElement} container
 * @param {DotItem[]} items
 * @param {string} progLabel
 * @param {number} iteration
 * @param {Places} places  how lines are named
 * @param {(index: number) => TileValues | undefined} tiles  an execution's tile values (undefined: loading)
 * @param {(operand: LinkedOperand) => void} onPick
 */
export function buildDotPanel(container, items, progLabel, iteration, places, tiles, onPick) {
  container.replaceChildren();
  container.append(el('h2', 'tl-panel-title', 'tl.dot'));
  if (!items.length) {
    container.hidden = true;
    return;
  }
  container.hidden = false;
  for (const it of items) {
    const sec = el('div', 'tl-dot');
    const d = it.exec;
    const head =
      `${placeName(places, it.site.file, it.site.line)}: program ${progLabel}, ` +
      (d
        ? `iteration ${d.iteration} of ${it.count} — ${d.m}×${d.k} @ ${d.k}×${d.n} (${2 * d.m * d.n * d.k} FLOPs)`
        : `no execution at iteration ${iteration}`);
    sec.append(el('div', 'tl-dot-head', head));
    if (d) {
      const got = tiles(it.index);
      const v = got && !isFailed(got) && got.kept ? got : null;
      const row = el('div', 'tl-tiles');
      row.append(
        tileBox('A', d.a.shape, d.a, 'tl-tile-a', places, v?.a, onPick),
        el('span', 'tl-tile-op', '@'),
        tileBox('B', d.b.shape, d.b, 'tl-tile-b', places, v?.b, onPick),
        el('span', 'tl-tile-op', '→'),
        tileBox('C = acc + A @ B', d.c, null, 'tl-tile-c', places, v?.c, onPick),
      );
      sec.append(row);
      if (got && isFailed(got)) sec.append(el('p', 'tl-note', `values not available: ${got.error}`));
      else if (got && !isFailed(got) && !got.kept) sec.append(el('p', 'tl-note', `values: ${got.why}`));
    }
    container.append(sec);
  }
}

// ---------------------------------------------------------------- Performance

/** @param {number | null | undefined} v */
function pct(v) {
  return v === null || v === undefined ? '–' : `${(100 * v).toFixed(1)}%`;
}
/** @param {number} n */
function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}
/** @param {number} t */
export function seconds(t) {
  if (t >= 1e-3) return `${(t * 1e3).toFixed(2)} ms`;
  if (t >= 1e-6) return `${(t * 1e6).toFixed(2)} µs`;
  return `${(t * 1e9).toFixed(1)} ns`;
}

/**
 * Performance panel: the launch's roofline estimate on the picked GPU, then per line metrics.
 * @param {HTMLElement} container
 * @param {PerformanceResult | Failed | null} perf  null: not loaded yet
 * @param {string} gpuKey
 * @param {Places} places  how lines are named
 * @param {(key: string) => void} onGpu
 * @param {(m: LineMetrics) => void} onLine
 */
export function buildPerformancePanel(container, perf, gpuKey, places, onGpu, onLine) {
  container.replaceChildren();
  container.append(el('h2', 'tl-panel-title', 'Performance'));
  if (!perf || isFailed(perf)) {
    container.append(el('p', 'tl-note', perf && perf.error ? `not available: ${perf.error}` : 'loading…'));
    return;
  }
  const L = (perf.launches || [])[0];
  const gpus = perf.gpus || [];
  const g = gpus.find((x) => x.key === gpuKey) || gpus[0];
  const pick = el('label', 'tl-field');
  pick.append(el('span', null, 'GPU'));
  const sel = el('select');
  sel.id = 'tl-gpu';
  sel.setAttribute('aria-label', 'GPU');
  fillSelect(
    sel,
    gpus.map((x) => ({ value: x.key, label: x.name })),
    g ? g.key : null,
  );
  sel.addEventListener('change', () => onGpu(sel.value));
  pick.append(sel);
  container.append(pick);
  if (L && g) {
    const r = L.roofline[g.key];
    const summary = el('div', 'tl-roofline');
    summary.id = 'tl-roofline';
    const ai = L.intensity === null ? '–' : `${L.intensity.toFixed(2)} FLOP/B`;
    summary.append(
      el('div', null, `roofline estimate on ${g.name}: ≥ ${seconds(r.seconds)} — ${r.bound}-bound`),
      el(
        'div',
        'tl-note',
        `DRAM ≥ ${bytes(L.dram_bytes)} (each touched 32-byte sector once; ${(g.bandwidth / 1e12).toFixed(2)} TB/s → ${seconds(r.memory_seconds)}), ` +
          (L.flops
            ? `tl.dot ${L.flops.toLocaleString()} FLOPs (→ ${seconds(r.compute_seconds)}), arithmetic intensity ${ai}, `
            : 'no tl.dot, ') +
          `bytes requested ${bytes(L.bytes)}; launch overhead not included`,
      ),
      el('div', 'tl-note', `peaks: ${g.source}`),
    );
    container.append(summary);
  }
  const table = el('table', 'tl-perf');
  const head = el('tr');
  for (const h of ['line', 'tensor', 'kind', 'bytes', 'mask efficiency', 'sector efficiency', 'reuse'])
    head.append(el('th', null, h));
  table.append(head);
  for (const m of perf.lines || []) {
    const tr = el('tr', m.sector_efficiency !== null && m.sector_efficiency < 0.25 ? 'tl-perf-low' : '');
    tr.dataset.line = String(m.line);
    const where = placeCell(places, m.file, m.line);
    tr.append(
      el('td', null, where),
      el('td', null, m.arg),
      el('td', null, m.kind),
      el('td', null, bytes(m.bytes)),
      el('td', null, pct(m.mask_efficiency)),
      el('td', null, pct(m.sector_efficiency)),
      el('td', null, m.reuse === null ? '–' : `${m.reuse.toFixed(2)}×`),
    );
    tr.addEventListener('click', () => onLine(m));
    table.append(tr);
  }
  for (const d of perf.dots || []) {
    const tr = el('tr', 'tl-perf-dot');
    tr.dataset.line = String(d.line);
    tr.append(
      el('td', null, placeCell(places, d.file, d.line)),
      el('td', null, 'tl.dot'),
      el('td', null, `${d.m}×${d.n}×${d.k}, ${d.precision}`),
      el('td', null, `${d.flops.toLocaleString()} FLOPs`),
      el('td', null, ''),
      el('td', null, ''),
      el('td', null, `${d.executions} exec.`),
    );
    table.append(tr);
  }
  container.append(table);
}
