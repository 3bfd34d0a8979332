// DOM pieces: pickers, header, program selector, legend, tensor cards, tooltip.
// Every text that comes from user code (names, file paths, ops) goes through textContent.

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string | null} [cls]
 * @param {unknown} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** @param {string | null | undefined} p */
export function basename(p) {
  const s = String(p || '');
  const i = Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\'));
  return i >= 0 ? s.slice(i + 1) : s;
}

/**
 * A range of a file's lines that the page names otherwise than by line number: in a notebook, the
 * lines of one cell of the script its code cells make (the language server sends them, in the
 * overview's lineNames; it owns the mapping).
 * @typedef {import('../src/viewerProtocol').LineName} LineNameRange
 */

/**
 * How the page names source lines: the kernel's file, the names the host sent for its lines.
 * @typedef {{kernelFile: string | null, names: LineNameRange[]}} Places
 */

/**
 * @param {Places} places
 * @param {string | null | undefined} file
 * @param {number} line
 * @returns {{cell: string, line: number} | null}  the named range the line is in, and the line in it
 */
function namedRange(places, file, line) {
  for (const r of places.names) {
    if (r.file === file && line >= r.first && line <= r.last) return { cell: r.name, line: line - r.first + 1 };
  }
  return null;
}

/**
 * A source line in words: `line 13`; in a notebook `cell 3, line 5`; in another file than the
 * kernel's `helpers.py:13` (withFile false: `line 13` there too).
 * @param {Places} places
 * @param {string | null | undefined} file
 * @param {number} line
 * @param {boolean} [withFile]
 */
export function placeName(places, file, line, withFile = true) {
  const hit = namedRange(places, file, line);
  if (hit) return `${hit.cell}, line ${hit.line}`;
  if (withFile && file && places.kernelFile && file !== places.kernelFile) return `${basename(file)}:${line}`;
  return `line ${line}`;
}

/**
 * A source line in a table's "line" column: `13`, `cell 3:5`, `helpers.py:13`.
 * @param {Places} places
 * @param {string | null | undefined} file
 * @param {number} line
 */
export function placeCell(places, file, line) {
  const hit = namedRange(places, file, line);
  if (hit) return `${hit.cell}:${hit.line}`;
  if (file && file !== places.kernelFile) return `${basename(file)}:${line}`;
  return String(line);
}

/**
 * A source line with its file: `vector_add.py:29`, in a notebook `demo.ipynb, cell 3, line 5`.
 * @param {Places} places
 * @param {string | null | undefined} file
 * @param {number} line
 */
export function placeFull(places, file, line) {
  const hit = namedRange(places, file, line);
  return hit ? `${basename(file)}, ${hit.cell}, line ${hit.line}` : `${basename(file)}:${line}`;
}

/** @type {Places} no names: lines by number */
export const NO_PLACES = { kernelFile: null, names: [] };

/**
 * Replace a <select>'s options: items = [{value, label}].
 * @param {HTMLSelectElement} select
 * @param {{value: string | number, label: string}[]} items
 * @param {string | number | null} [value]
 */
export function fillSelect(select, items, value) {
  select.replaceChildren(
    ...items.map((it) => {
      const o = document.createElement('option');
      o.value = String(it.value);
      o.textContent = it.label;
      return o;
    }),
  );
  if (value !== undefined && value !== null) select.value = String(value);
}

/** @param {number[] | null | undefined} grid */
export function gridLabel(grid) {
  const g = (grid || [1, 1, 1]).slice();
  while (g.length > 1 && g[g.length - 1] === 1) g.pop();
  return g.join('×');
}

/**
 * Program id (x, y, z) from a linear id over grid [gx, gy, gz] (x fastest).
 * @param {number} p
 * @param {number[]} grid
 */
export function unlinearPid(p, grid) {
  const gx = grid[0] || 1;
  const gy = grid[1] || 1;
  return [p % gx, Math.floor(p / gx) % gy, Math.floor(p / (gx * gy))];
}
/**
 * @param {number[]} pid
 * @param {number[]} grid
 */
export function linearPid(pid, grid) {
  const gx = grid[0] || 1;
  const gy = grid[1] || 1;
  return (pid[0] || 0) + gx * ((pid[1] || 0) + gy * (pid[2] || 0));
}
/**
 * @param {number} p
 * @param {number[] | null} [grid]
 */
export function pidLabel(p, grid) {
  const g = grid || [1, 1, 1];
  const t = unlinearPid(p, g);
  if ((g[2] || 1) > 1) return `(${t[0]},${t[1]},${t[2]})`;
  if ((g[1] || 1) > 1) return `(${t[0]},${t[1]})`;
  return String(t[0]);
}

/**
 * A compact list of ints: 0-3, 7, 9 … (+N more).
 * @param {number[]} ints
 * @param {number} [limit]
 */
export function rangesLabel(ints, limit = 8) {
  const s = Array.from(new Set(ints)).sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : String(s[i]));
    i = j + 1;
  }
  if (parts.length > limit) return `${parts.slice(0, limit).join(', ')} … (+${parts.length - limit} more)`;
  return parts.join(', ');
}

const MAX_PROGRAM_BUTTONS = 1024;

/**
 * Program selector: "all" + one button per program id (first MAX_PROGRAM_BUTTONS).
 * onPick(p | null, additive) — p null means all.
 * @param {HTMLElement} container
 * @param {number[]} grid
 * @param {number} nPrograms
 * @param {(p: number | null, additive: boolean) => void} onPick
 */
export function buildProgramGrid(container, grid, nPrograms, onPick) {
  container.replaceChildren();
  const all = el('button', 'tl-prog-all', 'all');
  all.type = 'button';
  all.dataset.pid = 'all';
  all.title = 'Show every program';
  all.addEventListener('click', () => onPick(null, false));
  const cells = el('div', 'tl-prog-cells');
  const gx = grid[0] || 1;
  if ((grid[1] || 1) * (grid[2] || 1) === 1)
    cells.classList.add('tl-prog-flow'); // 1-D grid: wrap
  else cells.style.gridTemplateColumns = `repeat(${Math.min(gx, 32)}, auto)`; // rows of program ids (x)
  const n = Math.min(nPrograms, MAX_PROGRAM_BUTTONS);
  const buttons = [];
  for (let p = 0; p < n; p++) {
    const b = el('button', 'tl-prog', String(p));
    b.type = 'button';
    b.dataset.pid = String(p);
    b.title = `program ${pidLabel(p, grid)} — click: only this one; shift/ctrl-click: add or remove`;
    b.addEventListener('click', (ev) => onPick(p, ev.shiftKey || ev.ctrlKey || ev.metaKey));
    buttons.push(b);
  }
  cells.append(...buttons);
  container.append(all, cells);
  if (nPrograms > n) container.append(el('span', 'tl-note', `first ${n} of ${nPrograms} programs`));
  return { all, buttons };
}

/** @typedef {ReturnType<typeof buildProgramGrid>} ProgramGrid */

/**
 * @param {ProgramGrid} pg
 * @param {Set<number> | null} selected  null: all
 * @param {((p: number) => string) | null} colors  a program's colour, when programs are coloured
 */
export function updateProgramGrid(pg, selected, colors) {
  pg.all.classList.toggle('selected', selected === null);
  pg.all.setAttribute('aria-pressed', String(selected === null));
  pg.buttons.forEach((b, p) => {
    const on = selected === null || selected.has(p);
    b.classList.toggle('selected', selected !== null && selected.has(p));
    b.setAttribute('aria-pressed', String(selected !== null && selected.has(p)));
    b.style.borderBottomColor = colors && on ? colors(p) : '';
  });
}

/**
 * Legend items: [{cls, label, color?}] with swatches coloured from the palette.
 * @param {HTMLElement} container
 * @param {{cls: string, label: string, color?: string}[]} items
 */
export function buildLegend(container, items) {
  container.replaceChildren(
    ...items.map((it) => {
      const row = el('span', 'tl-legend-item');
      const sw = el('span', `tl-swatch ${it.cls}`);
      if (it.color) sw.style.backgroundColor = it.color;
      row.append(sw, el('span', 'tl-legend-label', it.label));
      return row;
    }),
  );
}

/**
 * One tensor card: title, per-view controls, canvas, out-of-bounds line.
 * @param {{index: number, name: string, dtype?: string, shape?: number[], strides?: number[]}} t
 */
export function buildTensorCard(t) {
  const card = el('section', 'tl-card');
  card.dataset.tensor = String(t.index);
  const head = el('div', 'tl-card-head');
  const name = el('span', 'tl-tensor-name', t.name);
  const meta = el(
    'span',
    'tl-tensor-meta',
    `${t.dtype || ''}[${(t.shape || []).join(', ')}]` + (t.strides ? `  strides (${t.strides.join(', ')})` : ''),
  );
  const controls = el('span', 'tl-card-controls');
  head.append(name, meta, controls);
  const wrap = el('div', 'tl-canvas-wrap');
  const canvas = el('canvas', 'tl-canvas');
  wrap.append(canvas);
  const status = el('div', 'tl-card-status');
  const oob = el('div', 'tl-oob');
  card.append(head, wrap, status, oob);
  return { card, name, meta, controls, canvas, wrap, status, oob };
}

/**
 * @param {string} label
 * @param {number} value
 * @param {number} min
 * @param {number} max
 * @param {(v: number) => void} onChange  with the value clamped to [min, max]
 */
export function numberInput(label, value, min, max, onChange) {
  const lab = el('label', 'tl-num');
  lab.append(el('span', null, label));
  const inp = el('input');
  inp.type = 'number';
  inp.min = String(min);
  inp.max = String(max);
  inp.value = String(value);
  inp.addEventListener('change', () => {
    const v = Math.max(min, Math.min(max, Math.floor(Number(inp.value) || 0)));
    inp.value = String(v);
    onChange(v);
  });
  lab.append(inp);
  return lab;
}

/** @typedef {{text: string, cls?: string}} TipLine */

export class Tooltip {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.node = el('div', 'tl-tooltip');
    this.node.setAttribute('role', 'tooltip');
    this.node.hidden = true;
    root.append(this.node);
  }
  /**
   * @param {TipLine[]} lines
   * @param {number} clientX
   * @param {number} clientY
   */
  show(lines, clientX, clientY) {
    this.node.replaceChildren(...lines.map((l) => el('div', l.cls || 'tl-tip-line', l.text)));
    this.node.hidden = false;
    this.move(clientX, clientY);
  }
  /**
   * @param {string} cls  the class of the line to change
   * @param {string} text
   */
  setLine(cls, text) {
    const n = this.node.querySelector(`.${cls}`);
    if (n) n.textContent = text;
  }
  /**
   * @param {number} x
   * @param {number} y
   */
  move(x, y) {
    const pad = 14;
    const w = this.node.offsetWidth;
    const h = this.node.offsetHeight;
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    let left = x + pad;
    let top = y + pad;
    if (left + w > vw - 4) left = Math.max(4, x - w - pad);
    if (top + h > vh - 4) top = Math.max(4, y - h - pad);
    this.node.style.left = `${left}px`;
    this.node.style.top = `${top}px`;
  }
  hide() {
    this.node.hidden = true;
  }
}
