// The access-map page in headless Chromium under a stubbed VS Code host (acquireVsCodeApi
// answering from hand-written fixtures). Run: node --test tests/webview/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  launchBrowser,
  openPage,
  loadFixture,
  sendEvent,
  cellState,
  screenshot,
  waitIdle,
  waitTipLine,
} from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const VA = '/work/k/vector_add.py';
const OOB = '/work/k/oob.py';
const SM = '/work/k/softmax.py';

async function open(name, opts = {}) {
  return openPage(browser, server, { fixture: loadFixture(name), ...opts });
}

async function noErrors(page) {
  assert.deepEqual(page.errors, [], 'page errors');
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'CSP violations');
}

async function text(page, sel) {
  return page.$eval(sel, (e) => e.textContent);
}

const near = (a, b, tol = 2) => a.slice(0, 3).every((v, i) => Math.abs(v - b[i]) <= tol);

test('vector add: opens on the first access line and highlights what it touches', async () => {
  const page = await open('vector_add');
  try {
    assert.equal(await text(page, '#tl-follow'), 'following line 12: tl.load(x_ptr …)');
    const st = await page.evaluate(() => window.__viewer.state());
    assert.deepEqual(st.tensors, ['x_ptr', 'y_ptr', 'z_ptr']);
    assert.equal(st.kernel, 'add_kernel');
    assert.equal(st.launch, 0);
    // "all" programs of 2: followed cells are coloured by program.
    const c0 = await cellState(page, 'x_ptr', 0);
    const c127 = await cellState(page, 'x_ptr', 127);
    assert.equal(c0.drawn, 'followed');
    assert.equal(c0.program, 0);
    assert.equal(c127.program, 1);
    const pal = await page.evaluate(() => ({
      p0: window.__viewer.programColor(0),
      p1: window.__viewer.programColor(1),
      other: window.__viewer.palette().other,
    }));
    assert.ok(near(c0.pixel, pal.p0), `program 0 colour ${c0.pixel} vs ${pal.p0}`);
    assert.ok(near(c127.pixel, pal.p1), `program 1 colour ${c127.pixel} vs ${pal.p1}`);
    assert.ok(!near(pal.p0, pal.p1, 20), 'programs have distinct colours');
    // y and z are touched by other lines only: dim.
    const y5 = await cellState(page, 'y_ptr', 5);
    assert.equal(y5.drawn, 'other');
    assert.ok(near(y5.pixel, pal.other));
    assert.match(
      await page.$eval('[data-tensor="1"] .tl-card-status', (e) => e.textContent),
      /not accessed on line 12/,
    );
    await screenshot(page, 'vector_add');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('protocol: ready first, requests carry ids and methods, acquireVsCodeApi called once', async () => {
  const page = await open('vector_add');
  try {
    const msgs = await page.evaluate(() => window.__msgs);
    assert.equal(msgs[0].type, 'ready');
    const reqs = msgs.filter((m) => m.type === 'request');
    assert.equal(reqs[0].method, 'kernels');
    assert.deepEqual(
      reqs
        .slice(1)
        .filter((m) => m.method === 'accessMap')
        .map((m) => [m.method, m.params.launch, m.params.tensor]),
      [
        ['accessMap', 0, 0],
        ['accessMap', 0, 1],
        ['accessMap', 0, 2],
        ['accessMap', 0, 3],
      ],
    );
    // with the maps, once per launch: the Performance panel's and the tl.dot panel's data
    assert.deepEqual(
      reqs
        .slice(1)
        .filter((m) => m.method !== 'accessMap')
        .map((m) => [m.method, m.params]),
      [
        ['performance', { launch: 0 }],
        ['dots', { launch: 0 }],
      ],
    );
    assert.equal(new Set(reqs.map((m) => m.id)).size, reqs.length, 'ids are unique');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('cursor events switch the followed line; a line without accesses keeps the last one', async () => {
  const page = await open('vector_add');
  try {
    await sendEvent(page, { type: 'cursor', file: VA, line: 13 });
    assert.equal(await text(page, '#tl-follow'), 'following line 13: tl.load(y_ptr …)');
    assert.equal((await cellState(page, 'y_ptr', 3)).drawn, 'followed');
    assert.equal((await cellState(page, 'x_ptr', 3)).drawn, 'other');
    await sendEvent(page, { type: 'cursor', file: VA, line: 15 });
    assert.equal(await text(page, '#tl-follow'), 'following line 15: tl.store(z_ptr …)');
    const z = await cellState(page, 'z_ptr', 100);
    assert.equal(z.drawn, 'followed');
    assert.equal((await cellState(page, 'y_ptr', 3)).drawn, 'other');
    // line 14 (z = x + y) has no access: keep following 15 and say so
    await sendEvent(page, { type: 'cursor', file: VA, line: 14 });
    assert.equal(await text(page, '#tl-follow'), 'following line 15: tl.store(z_ptr …)');
    assert.match(await text(page, '#tl-cursor-note'), /cursor on line 14: no memory access/);
    // another file's line 12 is not this kernel's line 12
    await sendEvent(page, { type: 'cursor', file: '/elsewhere.py', line: 12 });
    assert.equal(await text(page, '#tl-follow'), 'following line 15: tl.store(z_ptr …)');
    // the cursor on a launch call shows that launch
    await sendEvent(page, { type: 'cursor', file: VA, line: 29 });
    assert.equal((await page.evaluate(() => window.__viewer.state())).launch, 1);
    await sendEvent(page, { type: 'cursor', file: VA, line: 24 });
    assert.equal((await page.evaluate(() => window.__viewer.state())).launch, 0);
    // the line picker follows too
    await page.selectOption('#tl-line', `${VA}\n12`);
    await waitIdle(page);
    assert.equal((await cellState(page, 'x_ptr', 0)).drawn, 'followed');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('program selection: one program, several (coloured by program), all', async () => {
  const page = await open('vector_add');
  try {
    await page.click('button[data-pid="1"]');
    assert.deepEqual((await page.evaluate(() => window.__viewer.state())).programs, [1]);
    const c0 = await cellState(page, 'x_ptr', 0);
    const c64 = await cellState(page, 'x_ptr', 64);
    const pal = await page.evaluate(() => window.__viewer.palette('load'));
    assert.equal(c0.drawn, 'untouched', "program 0's elements are not shown");
    assert.ok(near(c0.pixel, pal.elem));
    assert.equal(c64.drawn, 'followed');
    assert.ok(near(c64.pixel, pal.follow), 'one program: the followed-load colour');
    assert.equal(await page.$eval('button[data-pid="1"]', (b) => b.getAttribute('aria-pressed')), 'true');
    // z is a store: following its line uses the store colour
    await sendEvent(page, { type: 'cursor', file: VA, line: 15 });
    const palS = await page.evaluate(() => window.__viewer.palette('store'));
    assert.ok(near((await cellState(page, 'z_ptr', 64)).pixel, palS.follow));
    assert.ok(!near(palS.follow, pal.follow, 30));
    await sendEvent(page, { type: 'cursor', file: VA, line: 12 });
    // shift-click adds program 0
    await page.click('button[data-pid="0"]', { modifiers: ['Shift'] });
    assert.deepEqual((await page.evaluate(() => window.__viewer.state())).programs, [0, 1]);
    const p0 = await page.evaluate(() => window.__viewer.programColor(0));
    const a = await cellState(page, 'x_ptr', 0);
    assert.equal(a.drawn, 'followed');
    assert.ok(near(a.pixel, p0), 'several programs: coloured by program');
    // ctrl-click removes it again
    await page.click('button[data-pid="0"]', { modifiers: ['Control'] });
    assert.deepEqual((await page.evaluate(() => window.__viewer.state())).programs, [1]);
    await page.click('button[data-pid="all"]');
    assert.equal((await page.evaluate(() => window.__viewer.state())).programs, null);
    assert.equal((await cellState(page, 'x_ptr', 0)).drawn, 'followed');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('launch switching: the second launch has 4 programs and a masked tail past the end', async () => {
  const page = await open('vector_add');
  try {
    await page.selectOption('#tl-launch', '1');
    await page.waitForFunction(() => window.__viewer.state().launch === 1 && window.__viewer.idle);
    assert.equal(await page.$$eval('.tl-prog', (b) => b.length), 4);
    const lay = await page.evaluate(() => window.__viewer.layout('x_ptr'));
    assert.equal(lay.C * lay.R >= 200, true);
    assert.equal((await cellState(page, 'x_ptr', 199)).drawn, 'followed');
    assert.equal((await cellState(page, 'x_ptr', 199)).program, 3);
    // masked-off lanes of program 3 address 200..255: past the end, drawn hatched outside the grid
    const m = await cellState(page, 'x_ptr', { offset: 230 });
    assert.equal(m.drawn, 'masked-followed');
    assert.equal(m.element, false);
    const pal = await page.evaluate(() => window.__viewer.palette());
    assert.ok(near(m.pixel, pal.maskF) || near(m.pixel, pal.maskF2), `hatched masked colour, got ${m.pixel}`);
    assert.match(
      await page.$eval('[data-tensor="0"] .tl-card-status', (e) => e.textContent),
      /200 elements touched, 56 masked-off lane addresses/, // a fixture without lane counts: none said
    );
    await screenshot(page, 'vector_add_launch1');
    // back to launch 0
    await page.selectOption('#tl-launch', '0');
    await page.waitForFunction(() => window.__viewer.state().launch === 0 && window.__viewer.idle);
    assert.equal(await page.$$eval('.tl-prog', (b) => b.length), 2);
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('hover shows index, lazily fetched value, programs and lines; click reveals the line', async () => {
  const page = await open('vector_add');
  try {
    const pt = await page.evaluate(() => window.__viewer.cellPoint('x_ptr', 70));
    await page.mouse.move(pt.x, pt.y);
    await waitTipLine(page, 'value: 70');
    const tip = await page.$eval('.tl-tooltip', (e) => Array.from(e.children).map((c) => c.textContent));
    assert.equal(tip[0], 'x_ptr[70]');
    assert.ok(tip.includes('value: 70'), tip.join(' | '));
    assert.ok(tip.includes('line 12 tl.load: program 1'), tip.join(' | '));
    assert.ok(tip.includes('click: go to line 12'), tip.join(' | '));
    const valueReqs = await page.evaluate(() =>
      window.__msgs.filter((m) => m.method === 'values').map((m) => m.params),
    );
    assert.deepEqual(valueReqs, [{ launch: 0, tensor: 0, start: 0, count: 128 }]);
    // moving to another cell of the same block reuses the fetched block
    const pt2 = await page.evaluate(() => window.__viewer.cellPoint('x_ptr', 3));
    await page.mouse.move(pt2.x, pt2.y);
    await waitTipLine(page, 'value: 3');
    assert.match(await text(page, '.tl-tooltip'), /line 12 tl\.load: program 0/);
    assert.equal(await page.evaluate(() => window.__msgs.filter((m) => m.method === 'values').length), 1);
    await screenshot(page, 'vector_add_hover');
    // click: reveal the access line
    await page.mouse.click(pt.x, pt.y);
    const reveal = await page.evaluate(() => window.__msgs.filter((m) => m.type === 'reveal'));
    assert.deepEqual(reveal, [{ type: 'reveal', file: VA, line: 12 }]);
    // on z (other line only) the click reveals line 15
    const pz = await page.evaluate(() => window.__viewer.cellPoint('z_ptr', 10));
    await page.mouse.click(pz.x, pz.y);
    const reveal2 = await page.evaluate(() => window.__msgs.filter((m) => m.type === 'reveal').at(-1));
    assert.deepEqual(reveal2, { type: 'reveal', file: VA, line: 15 });
    // leaving the canvas hides the tooltip
    await page.mouse.move(2, 2);
    assert.equal(await page.$eval('.tl-tooltip', (e) => e.hidden), true);
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('values that were not kept say so', async () => {
  const page = await open('vector_add');
  try {
    await page.selectOption('#tl-launch', '1');
    await page.waitForFunction(() => window.__viewer.state().launch === 1 && window.__viewer.idle);
    const pt = await page.evaluate(() => window.__viewer.cellPoint('z_ptr', 5));
    await page.mouse.move(pt.x, pt.y);
    await waitTipLine(page, 'value: not kept');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('out of bounds: lanes past the end, before the start and in padding are drawn in bands with counts', async () => {
  const page = await open('oob');
  try {
    // scale_kernel: 24 lanes past the end of x (1000): in the unused tail of the last row
    const o = await cellState(page, 'x_ptr', { offset: 1010 });
    assert.equal(o.drawn, 'oob-followed');
    assert.equal(o.element, false);
    const pal = await page.evaluate(() => window.__viewer.palette());
    assert.ok(near(o.pixel, pal.oobF), `red, got ${o.pixel}`);
    assert.equal(
      await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.textContent),
      '⚠ out of bounds — line 12: 24 out-of-bounds addresses (24 past the end)',
    );
    assert.equal(
      await page.$eval('[data-tensor="1"] .tl-oob', (e) => e.hidden),
      true,
      'out_ptr is masked, not out of bounds',
    );
    assert.equal((await cellState(page, 'out_ptr', { offset: 1010 })).drawn, 'masked-other');
    // tooltip on the out-of-bounds cell
    const pt = await page.evaluate(() => window.__viewer.cellPoint('x_ptr', { offset: 1010 }));
    await page.mouse.move(pt.x, pt.y);
    const tip = await page.$eval('.tl-tooltip', (e) => Array.from(e.children).map((c) => c.textContent));
    assert.deepEqual(tip.slice(0, 3), [
      'x_ptr: out of bounds',
      'offset 1010 (11 past the end)',
      'line 12 tl.load: out-of-bounds lane of program 7',
    ]);
    await screenshot(page, 'oob_scale');

    // the cursor moves into shift_kernel (line 34): the page switches kernel and follows it
    await sendEvent(page, { type: 'cursor', file: OOB, line: 34 });
    await page.waitForFunction(() => window.__viewer.state().kernel === 'shift_kernel' && window.__viewer.idle);
    assert.equal(await text(page, '#tl-follow'), 'following line 34: tl.load(x_ptr …)');
    const lay = await page.evaluate(() => window.__viewer.layout('x_ptr'));
    assert.ok(lay.Bt >= 1, 'a band above the tensor for negative offsets');
    assert.equal((await cellState(page, 'x_ptr', { offset: -1 })).drawn, 'oob-followed');
    assert.match(
      await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.textContent),
      /1 out-of-bounds address \(1 before the start\)/,
    );
    // masked lanes given as a bitmap: element 299 (touched by nobody) and offsets past the end
    assert.equal((await cellState(page, 'x_ptr', 299)).drawn, 'masked-followed');
    assert.equal((await cellState(page, 'x_ptr', { offset: 382 })).drawn, 'masked-followed');
    assert.equal((await cellState(page, 'x_ptr', 298)).drawn, 'followed');

    // a line of the script's main block (after the kernels, between launches) switches nothing
    await sendEvent(page, { type: 'cursor', file: OOB, line: 67 });
    assert.equal((await page.evaluate(() => window.__viewer.state())).kernel, 'shift_kernel');

    // rowsum_kernel: a 4 x 10 view of rows 16 apart; wrong row stride walks into the padding
    await page.selectOption('#tl-kernel', '2');
    await page.waitForFunction(() => window.__viewer.state().kernel === 'rowsum_kernel' && window.__viewer.idle);
    const lr = await page.evaluate(() => window.__viewer.layout('x_ptr'));
    assert.ok(lr.Br >= 4, `padding columns shown to the right (Br=${lr.Br})`);
    const pad = await cellState(page, 'x_ptr', { offset: 12 });
    assert.equal(pad.drawn, 'oob-followed');
    assert.equal(pad.element, false);
    assert.equal((await cellState(page, 'x_ptr', [1, 0])).drawn, 'followed');
    assert.equal((await cellState(page, 'x_ptr', [1, 0])).program, 1);
    assert.equal(
      await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.textContent),
      '⚠ out of bounds — line 54: 12 out-of-bounds addresses (12 in padding)',
    );
    await screenshot(page, 'oob_rowsum');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('2-D softmax: rows per program, masked tails, one program selected', async () => {
  const page = await open('softmax');
  try {
    assert.deepEqual((await page.evaluate(() => window.__viewer.state())).tensors, ['out_ptr', 'x_ptr']);
    assert.equal((await cellState(page, 'x_ptr', [1, 5])).program, 1);
    assert.equal(
      (await cellState(page, 'x_ptr', { offset: 125 })).drawn,
      'masked-followed',
      "last row's masked lanes past the end",
    );
    await page.click('button[data-pid="2"]');
    assert.equal((await cellState(page, 'x_ptr', [2, 19])).drawn, 'followed');
    assert.equal(
      (await cellState(page, 'x_ptr', [3, 5])).drawn,
      'masked-followed',
      "program 2's masked lanes point into row 3",
    );
    assert.equal((await cellState(page, 'x_ptr', [3, 15])).drawn, 'untouched');
    assert.equal((await cellState(page, 'x_ptr', [0, 0])).drawn, 'untouched');
    assert.equal((await cellState(page, 'out_ptr', [2, 0])).drawn, 'other');
    // hover a masked cell: the tooltip names the masked lane
    const pt = await page.evaluate(() => window.__viewer.cellPoint('x_ptr', [3, 5]));
    await page.mouse.move(pt.x, pt.y);
    const tip = await text(page, '.tl-tooltip');
    assert.match(tip, /^x_ptr\[3, 5\]flat index 65, offset 65/);
    assert.match(tip, /line 12 tl\.load: program 3/);
    assert.match(tip, /line 12 tl\.load: masked-off lane of program 2/);
    await screenshot(page, 'softmax_program2');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('the program selection is per kernel: it stays with its kernel and comes back with it', async () => {
  const page = await open('softmax');
  try {
    const st = () => page.evaluate(() => window.__viewer.state());
    const toKernel = async (value, name) => {
      await page.selectOption('#tl-kernel', value);
      await page.waitForFunction((n) => window.__viewer.state().kernel === n && window.__viewer.idle, name);
    };
    const first = (await st()).kernel;
    await page.click('button[data-pid="2"]');
    assert.deepEqual((await st()).programs, [2]);
    // another kernel: its own selection (none yet: all programs), not softmax's program 2
    await toKernel('1', 'batched_kernel');
    assert.equal((await st()).programs, null);
    assert.equal((await cellState(page, 'a_ptr', [0, 1, 1])).drawn, 'followed');
    await page.click('button[data-pid="1"]');
    assert.deepEqual((await st()).programs, [1]);
    assert.equal((await cellState(page, 'a_ptr', [0, 1, 1])).drawn, 'untouched');
    // back: each kernel's selection comes back with it
    await toKernel('0', first);
    assert.deepEqual((await st()).programs, [2]);
    assert.equal((await cellState(page, 'x_ptr', [2, 19])).drawn, 'followed');
    assert.equal((await cellState(page, 'x_ptr', [0, 0])).drawn, 'untouched');
    await toKernel('1', 'batched_kernel');
    assert.deepEqual((await st()).programs, [1]);
    await noErrors(page);
    // the webview's saved state keeps both: a reloaded page gets them back
    const saved = await page.evaluate(() => window.__vsState);
    assert.deepEqual(
      Object.values(saved.programsByKernel).map((c) => c.programs),
      [[2]],
    );
    const again = await open('softmax', { state: saved });
    try {
      const st2 = () => again.evaluate(() => window.__viewer.state());
      assert.equal((await st2()).kernel, 'batched_kernel');
      assert.deepEqual((await st2()).programs, [1]);
      await again.selectOption('#tl-kernel', '0');
      await again.waitForFunction((n) => window.__viewer.state().kernel === n && window.__viewer.idle, first);
      assert.deepEqual((await st2()).programs, [2]);
      await noErrors(again);
    } finally {
      await again.context().close();
    }
  } finally {
    await page.context().close();
  }
});

test('3-D tensors: every slice of the leading dim in a grid; multi-line statements follow their first line', async () => {
  const page = await open('softmax');
  try {
    await page.selectOption('#tl-kernel', '1');
    await page.waitForFunction(() => window.__viewer.state().kernel === 'batched_kernel' && window.__viewer.idle);
    const lay = await page.evaluate(() => window.__viewer.layout('a_ptr'));
    assert.deepEqual([lay.R, lay.C, lay.nSlices], [4, 8, 3]);
    // [3, 4, 8]: three 4 x 8 slices side by side (no outer dims to pick), each drawn by its own canvas
    assert.deepEqual(
      (await page.evaluate(() => window.__viewer.slices('a_ptr'))).map((x) => x.index),
      [[0], [1], [2]],
    );
    assert.equal(await page.$$eval('[data-tensor="0"] .tl-slice-card canvas', (e) => e.length), 3);
    assert.equal(await page.$$eval('[data-tensor="0"] .tl-card-controls input', (e) => e.length), 0);
    assert.equal((await cellState(page, 'a_ptr', [0, 1, 1])).drawn, 'followed');
    assert.equal((await cellState(page, 'a_ptr', [2, 1, 1])).drawn, 'followed');
    assert.equal((await cellState(page, 'a_ptr', [2, 1, 1])).program, 2);
    assert.equal((await cellState(page, 'a_ptr', [0, 1, 1])).program, 0);
    // the load spans lines 40-41: a cursor on 41 follows line 40
    await sendEvent(page, { type: 'cursor', file: SM, line: 43 });
    assert.equal(await text(page, '#tl-follow'), 'following line 43: tl.store(b_ptr …)');
    await sendEvent(page, { type: 'cursor', file: SM, line: 41 });
    assert.equal(await text(page, '#tl-follow'), 'following line 40: tl.load(a_ptr …)');
    // b_ptr: half of each batch masked (in-bounds masked lanes)
    assert.equal((await cellState(page, 'b_ptr', [0, 3, 0])).drawn, 'masked-other');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('names, paths and values from user code are shown as text, never parsed as HTML', async () => {
  const page = await open('xss');
  try {
    const name = '<img src=x onerror=alert(1)>';
    assert.equal(await page.$$eval('img, svg, script:not([src]), b, i', (n) => n.length), 0);
    assert.equal(await page.$eval('.tl-tensor-name', (e) => e.textContent), name);
    assert.match(
      await page.$eval('#tl-kernel option', (e) => e.textContent),
      /^<img src=x onerror=alert\(1\)> {2}\(evil\.py:5\)/,
    );
    assert.equal(
      await page.$eval('#tl-launch option', (e) => e.textContent),
      'launch 0: grid 1 — <img src=y onerror=alert(2)>.py:20',
    );
    assert.equal(await text(page, '#tl-follow'), `following line 9: tl.load<svg onload=alert(3)>(${name} …)`);
    assert.match(await page.$eval('.tl-tensor-meta', (e) => e.textContent), /^<i>float32<\/i>\[16\]/);
    const pt = await page.evaluate((n) => window.__viewer.cellPoint(n, 2), name);
    await page.mouse.move(pt.x, pt.y);
    await waitTipLine(page, 'value: <img src=x onerror=alert(4)>');
    assert.equal(await page.$$eval('img, svg', (n) => n.length), 0);
    assert.equal(await page.$eval('.tl-tooltip .tl-tip-title', (e) => e.textContent), `${name}[2]`);
    assert.deepEqual(page.dialogs, []);
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('state persists: kernel, launch, line and programs come back after a reload', async () => {
  const page = await open('vector_add');
  let saved;
  try {
    await page.selectOption('#tl-launch', '1');
    await page.waitForFunction(() => window.__viewer.state().launch === 1 && window.__viewer.idle);
    await sendEvent(page, { type: 'cursor', file: VA, line: 13 });
    await page.click('button[data-pid="2"]');
    saved = await page.evaluate(() => window.__vsState);
    assert.equal(saved.kernel, 'add_kernel');
    assert.equal(saved.launch, 1);
    assert.deepEqual(saved.follow, { file: VA, line: 13 });
    assert.deepEqual(saved.programs, [2]);
  } finally {
    await page.context().close();
  }
  const page2 = await open('vector_add', { state: saved });
  try {
    const st = await page2.evaluate(() => window.__viewer.state());
    assert.equal(st.launch, 1);
    assert.deepEqual(st.follow, { file: VA, line: 13 });
    assert.deepEqual(st.programs, [2]);
    assert.equal((await cellState(page2, 'y_ptr', 130)).drawn, 'followed');
    assert.equal((await cellState(page2, 'y_ptr', 10)).drawn, 'untouched');
    await noErrors(page2);
  } finally {
    await page2.context().close();
  }
});

test('refresh re-requests everything; select opens a kernel at a line', async () => {
  const page = await open('oob');
  try {
    assert.equal((await cellState(page, 'x_ptr', 900)).drawn, 'followed');
    // new results: program 7 no longer reads past the end
    await page.evaluate(() => {
      const a = window.__fixture.maps['0/0'].accesses[7];
      a.touched = { runs: [896, 64] };
      a.oob = null;
    });
    await sendEvent(page, { type: 'refresh' });
    await page.waitForFunction(() => window.__viewer.idle && window.__viewer.counts('x_ptr').touchedF === 960);
    assert.equal((await cellState(page, 'x_ptr', 990)).drawn, 'untouched');
    assert.equal(await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.hidden), true);
    // select: open shift_kernel on its store line
    await sendEvent(page, { type: 'select', kernel: 'shift_kernel', file: OOB, line: 35 });
    await page.waitForFunction(() => window.__viewer.state().kernel === 'shift_kernel' && window.__viewer.idle);
    assert.equal(await text(page, '#tl-follow'), 'following line 35: tl.store(out_ptr …)');
    assert.equal((await cellState(page, 'out_ptr', 299)).drawn, 'followed');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('theme: the canvas follows the body class (light theme colours)', async () => {
  const page = await open('vector_add', { colorScheme: 'light' });
  try {
    await page.click('button[data-pid="0"]');
    await page.evaluate(() => {
      document.body.className = 'vscode-light';
    });
    await page.waitForFunction(() => window.__viewer.palette().elem.join() === '232,232,236,255');
    const c = await cellState(page, 'x_ptr', 100);
    assert.equal(c.drawn, 'untouched');
    assert.deepEqual(c.pixel, [232, 232, 236, 255]);
    await page.evaluate(() => {
      document.body.className = 'vscode-high-contrast';
    });
    await page.waitForFunction(() => window.__viewer.palette().follow.join() === '79,193,255,255');
    assert.deepEqual((await cellState(page, 'x_ptr', 1)).pixel, [79, 193, 255, 255]);
    await page.evaluate(() => {
      document.body.className = 'vscode-light';
    });
    await screenshot(page, 'vector_add_light');
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});

test('an error from the host is shown, not thrown', async () => {
  const fix = loadFixture('vector_add');
  fix.kernels = null;
  fix.maps = {};
  const page = await openPage(browser, server, {
    fixture: { ...fix, kernels: { file: VA, status: 'error', kernels: [] } },
  });
  try {
    assert.match(await text(page, '#tl-message'), /No kernel launches recorded \(error\)/);
    await noErrors(page);
  } finally {
    await page.context().close();
  }
});
