// End-to-end: a Jupyter notebook in a real VS Code (code-server's built-in notebook editor, the ipynb serializer
// it ships; no Jupyter extension and no kernel: the language server runs the cells' code itself), the built
// .vsix installed, driven through headless Chromium. Each cell is its own Monaco editor inside the notebook
// editor. Screenshots of every step: tests/e2e/artifacts/notebook/.
//   node --test tests/e2e/notebook.test.mjs        (after `make vsix` and tests/e2e/setup.sh; `make test-e2e`)
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import { REPO } from './lib/codeServer.mjs';
import { e2eSession, viewerFrame, waitViewer } from './lib/session.mjs';
import { norm } from './lib/workbench.mjs';

const WORK = path.join(REPO, '.e2e', 'notebook');
const ARTIFACTS = path.join(REPO, 'tests', 'e2e', 'artifacts', 'notebook');

// tests/notebooks/data/oob_cells.ipynb (shared with the check and LSP tests), cells counted from 0 as in the
// file (VS Code and the page count from 1: "Cell 3 of 5" is cell 2): cell 1 imports (after a `%matplotlib
// inline` magic), cell 2 is the kernel, its line 5 `x = tl.load(x_ptr + offs)` without a mask (program 7
// reads 24 elements past the end of x), line 6 the masked store; cell 4 launches it (after `!echo`).
const NB = 'oob_cells.ipynb';
const FIXTURE = path.join(REPO, 'tests', 'notebooks', 'data', NB);
const KERNEL_CELL = /def\s+copy_kernel/;
const LAUNCH_CELL = /copy_kernel\[/;

const session = e2eSession({
  work: WORK,
  artifacts: ARTIFACTS,
  files: [[FIXTURE, NB]],
  settings: { 'workbench.colorTheme': 'Default Dark Modern', 'notebook.lineNumbers': 'on' },
});
let page, wb;

before(async () => {
  await session.start();
  ({ page, wb } = session);
});
after(() => session.stop());

/** session.step, plus the notebook editor's HTML of the moment a step fails. */
function step(name, fn) {
  session.step(name, fn, async (tag) => {
    const html = await page
      ?.evaluate(() => [...document.querySelectorAll('.notebook-editor')].map((e) => e.outerHTML).join('\n'))
      .catch(() => '');
    if (html) fs.writeFileSync(path.join(ARTIFACTS, `${tag}.html`), html);
  });
}

/**
 * The rendered lines (inlay hints included, top to bottom) of the cell editor whose text matches `cell` (a
 * RegExp source), and where its squiggles are: for each error squiggle, the index of the line it is on.
 * Runs in the page.
 */
function cellView([cellSrc]) {
  const re = new RegExp(cellSrc);
  const eds = [...document.querySelectorAll('.notebook-editor .cell-editor-container .monaco-editor')];
  const ed = eds.find((e) => [...e.querySelectorAll('.view-lines .view-line')].some((l) => re.test(l.textContent)));
  if (!ed) return null;
  const top = (el) => parseFloat(el.style.top);
  const rows = [...ed.querySelectorAll('.view-lines .view-line')].sort((a, b) => top(a) - top(b));
  const tops = rows.map(top);
  const squiggles = [...ed.querySelectorAll('.squiggly-error')].map((s) => {
    // a squiggle is drawn in the line's overlay row, which has the line's top
    const row = s.closest('.view-overlays > div') ?? s.parentElement;
    return tops.indexOf(top(row));
  });
  return { lines: rows.map((r) => r.textContent.replace(/\u00a0/g, ' ')), squiggles };
}

const cell = (re) => page.evaluate(cellView, [re.source]);

/** Polls the cell editor matching `re` until `pred` holds of its cellView (the predicate runs in Node). */
async function waitCell(re, pred, what, timeout = 60000) {
  const deadline = Date.now() + timeout;
  let v;
  for (;;) {
    v = await cell(re).catch(() => null);
    if (v && pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout} ms\ncell: ${JSON.stringify(v)}`);
    await page.waitForTimeout(200);
  }
}

/** Viewport point at the middle of `needle` on the line of the cell editor matching `re` that contains it. */
async function pointInCell(re, needle) {
  return page.evaluate(
    ([src, nd]) => {
      const cellRe = new RegExp(src);
      const eds = [...document.querySelectorAll('.notebook-editor .cell-editor-container .monaco-editor')];
      const ed = eds.find((e) =>
        [...e.querySelectorAll('.view-lines .view-line')].some((l) => cellRe.test(l.textContent)),
      );
      const line =
        ed && [...ed.querySelectorAll('.view-line')].find((l) => l.textContent.replace(/\u00a0/g, ' ').includes(nd));
      if (!line) return null;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      const nodes = [];
      let text = '';
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        nodes.push([n, text.length]);
        text += n.textContent;
      }
      const at = text.replace(/\u00a0/g, ' ').indexOf(nd);
      const mid = at + Math.floor(nd.length / 2);
      const [node, start] = nodes.filter(([, off]) => off <= mid).pop();
      const r = document.createRange();
      r.setStart(node, mid - start);
      r.setEnd(node, mid - start + 1);
      const b = r.getBoundingClientRect();
      return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    },
    [re.source, needle],
  );
}

/** Where the cursor is: the text of the focused cell editor and its cursor's line (the status bar of a notebook
 * names the cell, not the line). Runs in the page. */
function cursorNow() {
  const ed = document.querySelector('.notebook-editor .cell-editor-container .monaco-editor.focused');
  if (!ed) return null;
  const line = ed.querySelector('.margin-view-overlays .line-numbers.active-line-number')?.textContent.trim();
  return { text: ed.querySelector('.view-lines')?.textContent.replace(/\u00a0/g, ' ') ?? '', line: Number(line) };
}

/** Waits until the cursor is on 1-based `line` of the cell editor matching `re`, that editor focused. */
async function waitCursor(re, line, timeout = 15000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const at = await page.evaluate(cursorNow);
    if (at && re.test(at.text) && at.line === line) return;
    if (Date.now() > deadline)
      throw new Error(`the cursor is not on line ${line} of the cell ${re}: ${JSON.stringify(at)}`);
    await page.waitForTimeout(100);
  }
}

describe('Triton Lens in a Jupyter notebook in VS Code', () => {
  step('opens the notebook in the notebook editor and shows inlay hints on the cell lines', async () => {
    await wb.openFile(NB, null); // then the kernel cell's lines, polled in the DOM
    // line 5 of the kernel cell: every lane on (no mask), 24 of them past the end of x
    await waitCell(KERNEL_CELL, (v) => /x_ptr\[0:1000\]/.test(v.lines[4]), 'hints in the kernel cell', 180000);
    // No stale lens: once the hints are there, the kernel cell's lens drops "running…" (VS Code asks for
    // lenses again after the server's refresh, debounced by a few hundred ms).
    await page.waitForFunction(
      () => {
        const lenses = [...document.querySelectorAll('.notebook-editor .codelens-decoration')];
        return (
          lenses.some((l) => /Visualize this kernel/.test(l.textContent)) &&
          !lenses.some((l) => /running…/.test(l.textContent))
        );
      },
      undefined,
      { timeout: 30000 },
    );
    const k = await cell(KERNEL_CELL);
    await wb.shot('notebook-inlay-hints');
    assert.match(k.lines[4], /x = tl\.load\(x_ptr \+ offs\).*24 OOB · x_ptr\[0:1000\] · 8 prog/, k.lines[4]);
    assert.match(
      k.lines[5],
      /tl\.store\(y_ptr \+ offs, x, mask=offs < n\).*y_ptr\[0:1000\].*1000\/1024 active/,
      k.lines[5],
    );
    // the other lines of the kernel cell, and the launch cell, carry no load/store hint
    for (const i of [0, 1, 2, 3]) assert.doesNotMatch(k.lines[i], /_ptr\[/, k.lines[i]);
    const l = await cell(LAUNCH_CELL);
    assert.ok(l, 'the launch cell is rendered');
    for (const line of l.lines) assert.doesNotMatch(line, /_ptr\[\d/, line);
  });

  step('puts the out-of-bounds diagnostic on the kernel cell, at the load line', async () => {
    await waitCell(KERNEL_CELL, (v) => v.squiggles.length > 0, 'an error squiggle in the kernel cell');
    const k = await cell(KERNEL_CELL);
    const l = await cell(LAUNCH_CELL);
    assert.deepEqual(
      [...new Set(k.squiggles)],
      [4],
      `the squiggle is on line 5 of the kernel cell: ${JSON.stringify(k)}`,
    );
    assert.deepEqual(l.squiggles, [], `no squiggle in the launch cell: ${JSON.stringify(l)}`);
    // the Problems view names the message, the cell's line and column
    await page.keyboard.press('Control+Shift+M');
    const row = page
      .locator('.markers-panel .monaco-list-row', { hasText: "would read past the end of x_ptr's tensor" })
      .first();
    await row.waitFor({ timeout: 30000 });
    const text = norm(await row.innerText());
    const all = norm(await page.locator('.markers-panel').innerText());
    await wb.shot('notebook-problems-oob');
    assert.match(text, /24 lanes of program \(7,\)/, text);
    assert.match(text, /\[Ln 5, Col 9\]/, text);
    assert.match(all, /oob_cells\.ipynb/, all);
    await page.keyboard.press('Control+Shift+M');
    await page.keyboard.press('Escape');
  });

  let frame;
  step('opens the access map from the "Visualize this kernel" lens of the kernel cell', async () => {
    const lens = page.locator('.notebook-editor .codelens-decoration a', { hasText: 'Visualize this kernel' }).first();
    await lens.waitFor({ timeout: 30000 });
    await lens.click();
    await page.locator('.tabs-container .tab', { hasText: `Access map: ${NB}` }).waitFor({ timeout: 30000 });
    frame = await viewerFrame(page, { kernel: 'copy_kernel' });
    const st = await frame.evaluate(() => window.__viewer.state());
    await wb.shot('notebook-access-map');
    assert.deepEqual(st.tensors, ['x_ptr', 'y_ptr']);
  });

  step('follows the cursor from the load to the store of the kernel cell', async () => {
    // the lens click left the focus in the view: click into the cell, on the load
    const load = await pointInCell(KERNEL_CELL, 'x = tl.load');
    assert.ok(load, 'the load line of the kernel cell is on screen');
    await page.mouse.click(load.x, load.y);
    await waitViewer(frame, () => window.__viewer.idle && window.__viewer.state().follow, 'following the load');
    const f1 = (await frame.evaluate(() => window.__viewer.state())).follow;
    // the page names the line as VS Code does the cell: its status bar's "Cell 3 of 5", line 5 of it
    const header1 = await frame.evaluate(() => document.getElementById('tl-follow').textContent);
    const status = await page.evaluate(() => document.querySelector('.statusbar')?.textContent ?? '');
    const at1 = await frame.evaluate(() => ({
      x: window.__viewer.cellState('x_ptr', 5),
      y: window.__viewer.cellState('y_ptr', 5),
    }));
    await wb.shot('notebook-view-follows-load');
    const store = await pointInCell(KERNEL_CELL, 'tl.store');
    await page.mouse.click(store.x, store.y);
    await waitViewer(
      frame,
      (l) => window.__viewer.idle && window.__viewer.state().follow?.line === l + 1,
      'following the store',
      { arg: f1.line },
    );
    const at2 = await frame.evaluate(() => ({
      x: window.__viewer.cellState('x_ptr', 5),
      y: window.__viewer.cellState('y_ptr', 5),
    }));
    await wb.shot('notebook-view-follows-store');
    const header2 = await frame.evaluate(() => document.getElementById('tl-follow').textContent);
    assert.match(status, /Cell 3 of 5/, status);
    assert.equal(header1, 'following cell 3, line 5: tl.load(x_ptr …)');
    assert.equal(header2, 'following cell 3, line 6: tl.store(y_ptr …)');
    // the view names the notebook's script lines: cell 1's four lines (its magic skipped) come first
    assert.equal(f1.line, 9, JSON.stringify(f1));
    assert.equal(at1.x.followed, true, JSON.stringify(at1));
    assert.equal(at1.y.followed, false, JSON.stringify(at1));
    assert.equal(at2.x.followed, false, JSON.stringify(at2));
    assert.equal(at2.y.followed, true, JSON.stringify(at2));
    assert.notDeepEqual(at1.x.pixel, at2.x.pixel, 'x_ptr cell 5 is drawn differently once the store is followed');
  });

  step('reveals the kernel cell at the store line when a y_ptr cell of the view is clicked', async () => {
    // the cursor away from the kernel cell first: into the launch cell, line 3
    const away = await pointInCell(LAUNCH_CELL, 'torch.empty_like');
    await page.mouse.click(away.x, away.y);
    await waitCursor(LAUNCH_CELL, 3);
    const pt = await frame.evaluate(() => window.__viewer.cellPoint('y_ptr', 10));
    assert.ok(pt, 'y_ptr cell 10 is on screen');
    const fb = await (await frame.frameElement()).boundingBox();
    await page.mouse.click(fb.x + pt.x, fb.y + pt.y);
    // the store (line 6 of the kernel cell) is the only access of y_ptr: the cursor lands there, in that cell
    await waitCursor(KERNEL_CELL, 6);
    await wb.shot('notebook-cell-click-reveals-line');
  });
});
