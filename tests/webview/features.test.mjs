// Issue 14 in real Chromium on real engine results (tests/corpus): Values and the histogram
// (layernorm), Iteration and tl.dot tiles (matmul), N-D slices (attention_4d), Programs (program id
// fields and the ordered memory operations), Performance, in the dark and the light theme.
// Screenshots go to tests/webview/artifacts/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openPage, cellState, screenshot, waitIdle } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PY = process.env.TRITON_LENS_PYTHON || path.join(ROOT, '.venv/bin/python');
const CORPUS = path.join(ROOT, 'tests/corpus');

const fixtures = new Map();
function engineFixture(script) {
  if (!fixtures.has(script)) {
    const out = execFileSync(PY, [path.join(HERE, 'engine_fixture.py'), path.join(CORPUS, script)], {
      maxBuffer: 64 << 20,
      timeout: 180000,
    });
    fixtures.set(script, JSON.parse(out.toString()));
  }
  return fixtures.get(script);
}

function lineOf(script, text) {
  const lines = fs.readFileSync(path.join(CORPUS, script), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  assert.ok(i >= 0, `${text} in ${script}`);
  return i + 1;
}

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

const THEMES = [
  ['dark', 'vscode-dark'],
  ['light', 'vscode-light'],
];

async function open(script, theme) {
  const page = await openPage(browser, server, { fixture: engineFixture(script), colorScheme: theme[0] });
  await page.evaluate((c) => {
    document.body.className = c;
  }, theme[1]);
  await waitIdle(page);
  return page;
}

async function follow(page, file, line) {
  await page.evaluate(([f, l]) => window.postMessage({ type: 'cursor', file: f, line: l }, '*'), [file, line]);
  await page.waitForFunction((l) => window.__viewer.state().follow.line === l, line);
  await waitIdle(page);
}

async function setIteration(page, i) {
  await page.$eval(
    '#tl-iteration',
    (e, v) => {
      e.value = String(v);
      e.dispatchEvent(new Event('input'));
    },
    i,
  );
  await waitIdle(page);
}

for (const theme of THEMES) {
  test(`Values (${theme[0]}): layernorm coloured by value with the followed line's histogram`, async () => {
    const script = 'layernorm.py';
    const fix = engineFixture(script);
    const page = await open(script, theme);
    try {
      const file = path.join(CORPUS, script);
      const storeLine = lineOf(script, 'tl.store(y_ptr');
      await follow(page, file, storeLine);
      await page.selectOption('#tl-values', 'after');
      await page.waitForFunction(() => {
        const v = window.__viewer.values('y_ptr');
        return v && v.histogram;
      });
      const v = await page.evaluate(() => window.__viewer.values('y_ptr'));
      // y = layernorm(x) * w + b: 16 rows of 200, every element stored by the followed line
      const want = fix.extra.valueMap['0/1/after'];
      assert.equal(v.block, 1);
      assert.equal(v.cells, 3200);
      assert.equal(v.histogram.line, storeLine);
      assert.equal(v.histogram.elements, 3200);
      assert.equal(
        v.histogram.counts.reduce((a, b) => a + b, 0),
        3200,
      );
      assert.deepEqual(v.histogram.counts, want.histograms.find((h) => h.line === storeLine).counts);
      // the cell of the largest value is drawn in the brightest colour, the smallest in the darkest
      const ys = fix.values['0/1'];
      const iMax = ys.indexOf(Math.max(...ys));
      const iMin = ys.indexOf(Math.min(...ys));
      const hi = await cellState(page, 'y_ptr', iMax);
      const lo = await cellState(page, 'y_ptr', iMin);
      const lum = (p) => 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
      assert.ok(lum(hi.pixel) > lum(lo.pixel) + 60, `${hi.pixel} vs ${lo.pixel}`);
      assert.deepEqual(hi.pixel.slice(0, 3), [253, 231, 37]);
      // every cell's tooltip has its value (after the launch)
      const pt = await page.evaluate((i) => window.__viewer.cellPoint('y_ptr', i), iMax);
      await page.mouse.move(pt.x, pt.y);
      await page.waitForFunction(
        () =>
          /^value: /.test(document.querySelector('.tl-tip-value')?.textContent || '') &&
          document.querySelector('.tl-tip-value').textContent !== 'value: …',
      );
      const tip = await page.$eval('.tl-tip-value', (e) => e.textContent);
      assert.equal(Number(tip.slice('value: '.length)), Number(ys[iMax].toPrecision(6)));
      // before the launch: y came from torch.empty; x is an input: its histogram is of the input values
      await page.selectOption('#tl-values', 'before');
      await page.waitForFunction(() => {
        const x = window.__viewer.values('x_ptr');
        return x && x.lo !== undefined;
      });
      const xb = await page.evaluate(() => window.__viewer.values('x_ptr'));
      const xs = fix.extra.valueMap['0/0/before'];
      assert.deepEqual([xb.lo, xb.hi], [xs.lo, xs.hi]);
      assert.match(
        await page.$eval('[data-tensor="0"] .tl-values-box', (e) => e.textContent),
        /values before the launch/,
      );
      // w (200 elements) is read by all 16 programs: its distinct elements and its lane accesses, apart
      await follow(page, file, lineOf(script, 'w = tl.load('));
      const wCard = await page.evaluate(() => window.__viewer.state().tensors.indexOf('w_ptr'));
      assert.match(
        await page.$eval(`[data-tensor="${wCard}"] .tl-card-status`, (e) => e.textContent),
        /^line \d+: 200 elements touched by 3,200 active lanes/,
      );
      await page.mouse.move(1, 1);
      await screenshot(page, `values_layernorm_${theme[0]}`);
      assert.deepEqual(page.errors, []);
      assert.deepEqual(await page.evaluate(() => window.__csp), []);
    } finally {
      await page.context().close();
    }
  });

  test(`Iteration and tl.dot (${theme[0]}): matmul's K loop, step by step, with A/B/C tiles`, async () => {
    const script = 'matmul.py';
    const page = await open(script, theme);
    try {
      const file = path.join(CORPUS, script);
      const aLine = lineOf(script, 'a = tl.load(');
      const bLine = lineOf(script, 'b = tl.load(');
      // the store after the loop runs once per program: no Iteration slider shown
      await follow(page, file, lineOf(script, 'tl.store(c_ptr'));
      assert.ok((await page.evaluate(() => window.__viewer.state())).iterations <= 1);
      assert.equal(await page.$eval('.tl-iteration', (e) => e.checkVisibility()), false);
      await follow(page, file, aLine);
      let st = await page.evaluate(() => window.__viewer.state());
      assert.equal(st.iterations, 3); // K = 72 in blocks of 32
      assert.equal(await page.$eval('.tl-iteration', (e) => e.checkVisibility()), true);
      // all iterations: programs (0, 0) and (0, 1) read a[0:32, 0:72]
      assert.equal((await cellState(page, 'a_ptr', [0, 10])).followed, true);
      assert.equal((await cellState(page, 'a_ptr', [0, 70])).followed, true);
      const allPixel = (await cellState(page, 'a_ptr', [0, 10])).pixel;
      await setIteration(page, 1);
      // iteration 1: columns 32:64 only
      assert.equal((await cellState(page, 'a_ptr', [0, 40])).followed, true);
      const k10 = await cellState(page, 'a_ptr', [0, 10]);
      assert.equal(k10.drawn, 'untouched');
      assert.notDeepEqual(k10.pixel, allPixel, 'a_ptr[0, 10] is drawn differently at iteration 1');
      assert.equal((await cellState(page, 'a_ptr', [0, 70])).drawn, 'untouched');
      assert.equal(await page.$eval('#tl-iteration-label', (e) => e.textContent), 'iteration 1 of 3');
      // iteration 2: the partly masked last K block, columns 64:72 touched, 72:96 masked off
      await setIteration(page, 2);
      assert.equal((await cellState(page, 'a_ptr', [0, 70])).followed, true);
      assert.equal((await cellState(page, 'a_ptr', [0, 10])).drawn, 'untouched');
      // tl.dot of program (0, 0) at iteration 2: A = a[0:32, 64:72] (masked rest), B = b[64:72, 0:32]
      await page.click('.tl-prog[data-pid="0"]');
      await waitIdle(page);
      const dot = await page.$eval('#tl-dots', (e) => e.innerText);
      assert.match(dot, /iteration 2 of 3 — 32×32 @ 32×32 \(65536 FLOPs\)/);
      const links = await page.$$eval('.tl-tile-link', (els) => els.map((e) => e.textContent));
      assert.deepEqual(links, [`a_ptr[0:32, 64:72] — line ${aLine}`, `b_ptr[64:72, 0:32] — line ${bLine}`]);
      // the tiles show their values: A is zero past K = 72 (masked off, other=0.0) in its columns 8..31,
      // so its canvas has the colour of 0 there and other colours in columns 0..7; C is the product
      await page.waitForFunction(() => document.querySelectorAll('#tl-dots canvas.tl-tile-values').length === 3);
      const tiles = await page.$$eval('#tl-dots canvas.tl-tile-values', (cs) =>
        cs.map((c) => {
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const px = (x, y) => Array.from(d.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3)).join(',');
          const colours = new Set();
          for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) colours.add(px(x, y));
          return {
            w: c.width,
            h: c.height,
            colours: colours.size,
            tail: new Set([8, 20, 31].map((x) => px(x, 5))).size,
          };
        }),
      );
      assert.deepEqual(
        tiles.map((t) => [t.w, t.h]),
        [
          [32, 32],
          [32, 32],
          [32, 32],
        ],
      );
      assert.equal(tiles[0].tail, 1, 'A is one colour (its zeros) past K'); // masked-off columns of A: 0.0
      assert.ok(tiles[0].colours > 20 && tiles[2].colours > 100, JSON.stringify(tiles));
      const labels = await page.$$eval('#tl-dots .tl-tile-label', (els) => els.map((e) => e.textContent));
      assert.match(labels[0], /^A: 32×32 · -?\d.* … \d/, labels[0]);
      assert.match(labels[2], /^C = acc \+ A @ B: 32×32 · /, labels[2]);
      // the tiles follow the slider: iteration 1 multiplies the middle K block
      await setIteration(page, 1);
      assert.match(await page.$eval('#tl-dots', (e) => e.innerText), /iteration 1 of 3 — 32×32 @ 32×32/);
      assert.deepEqual(await page.$$eval('.tl-tile-link', (els) => els.map((e) => e.textContent)), [
        `a_ptr[0:32, 32:64] — line ${aLine}`,
        `b_ptr[32:64, 0:32] — line ${bLine}`,
      ]);
      await setIteration(page, 2);
      // the B tile is linked to its load: clicking follows line 23 at the same iteration
      await page.click('.tl-tile-b .tl-tile-link');
      await waitIdle(page);
      st = await page.evaluate(() => window.__viewer.state());
      assert.deepEqual([st.follow.line, st.iteration], [bLine, 2]);
      assert.equal((await cellState(page, 'b_ptr', [65, 3])).followed, true);
      assert.equal((await cellState(page, 'b_ptr', [3, 3])).drawn, 'untouched');
      // play steps through the iterations, pause stops
      await setIteration(page, -1);
      await page.click('#tl-play');
      await page.waitForFunction(() => window.__viewer.state().iteration === 1, null, { timeout: 5000 });
      await page.click('#tl-play');
      st = await page.evaluate(() => window.__viewer.state());
      assert.equal(st.playing, false);
      const it = st.iteration;
      await page.waitForTimeout(900);
      assert.equal((await page.evaluate(() => window.__viewer.state())).iteration, it);
      await screenshot(page, `iteration_dot_matmul_${theme[0]}`);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.context().close();
    }
  });

  test(`N-D slices (${theme[0]}): attention's [B, H, S, D] as a grid of 2-D slices`, async () => {
    const script = 'attention_4d.py';
    const page = await open(script, theme);
    try {
      const slices = await page.evaluate(() => window.__viewer.slices('q_ptr'));
      assert.deepEqual(
        slices.map((s) => s.index),
        [
          [0, 0],
          [0, 1],
          [0, 2],
          [0, 3],
        ],
      );
      assert.equal(await page.$$eval('[data-tensor="0"] .tl-slice-card canvas', (e) => e.length), 4);
      const titles = await page.$$eval('[data-tensor="0"] .tl-slice-title', (e) => e.map((x) => x.textContent));
      assert.deepEqual(titles, ['q_ptr[0, 0, :, :]', 'q_ptr[0, 1, :, :]', 'q_ptr[0, 2, :, :]', 'q_ptr[0, 3, :, :]']);
      // program (m, bh) reads q[bh // 4, bh % 4, 16m:16m+16, :]; with one program picked, only its slice lights
      await page.click('.tl-prog[data-pid="3"]'); // (1, 1): b 0, h 1, rows 16:32
      await waitIdle(page);
      assert.equal((await cellState(page, 'q_ptr', [0, 1, 20, 3])).drawn, 'followed');
      assert.equal((await cellState(page, 'q_ptr', [0, 1, 3, 3])).drawn, 'untouched');
      assert.equal((await cellState(page, 'q_ptr', [0, 2, 20, 3])).drawn, 'untouched');
      assert.equal((await cellState(page, 'q_ptr', [1, 1, 20, 3])).drawn, 'hidden'); // b = 1: not shown
      const card = () => page.$eval('[data-tensor="0"] .tl-slice-card:nth-child(2) canvas', (c) => c.toDataURL());
      const before = await card();
      // the outer-dimension field picks b = 1
      await page.fill('[data-tensor="0"] .tl-card-controls input', '1');
      await page.press('[data-tensor="0"] .tl-card-controls input', 'Enter');
      await page.waitForFunction(() => window.__viewer.slices('q_ptr')[0].index[0] === 1);
      await waitIdle(page);
      assert.deepEqual(await page.$$eval('[data-tensor="0"] .tl-slice-title', (e) => e.map((x) => x.textContent)), [
        'q_ptr[1, 0, :, :]',
        'q_ptr[1, 1, :, :]',
        'q_ptr[1, 2, :, :]',
        'q_ptr[1, 3, :, :]',
      ]);
      assert.notEqual(await card(), before, 'the second slice shows other cells for b = 1');
      assert.equal((await cellState(page, 'q_ptr', [1, 1, 20, 3])).drawn, 'untouched'); // program 3 is b = 0
      await page.click('.tl-prog-all');
      await waitIdle(page);
      const c = await cellState(page, 'q_ptr', [1, 1, 20, 3]);
      assert.deepEqual([c.drawn, c.program], ['followed', 1 + 2 * 5]); // program (1, 5): bh = 5 = b 1, h 1
      await screenshot(page, `slices_attention_${theme[0]}`);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.context().close();
    }
  });

  test(`Programs and Performance (${theme[0]}): program id fields, ordered operations, roofline`, async () => {
    const script = 'matmul.py';
    const page = await open(script, theme);
    try {
      const aLine = lineOf(script, 'a = tl.load(');
      const bLine = lineOf(script, 'b = tl.load(');
      const cLine = lineOf(script, 'tl.store(c_ptr');
      // a 2-D grid (2 x 2): one field per axis
      assert.equal(await page.$$eval('#tl-pid input', (e) => e.length), 2);
      await page.fill('#tl-pid input[data-axis="0"]', '1');
      await page.press('#tl-pid input[data-axis="0"]', 'Enter');
      await waitIdle(page);
      assert.deepEqual((await page.evaluate(() => window.__viewer.state())).programs, [1, 3]); // x = 1, any y
      await page.fill('#tl-pid input[data-axis="1"]', '1');
      await page.press('#tl-pid input[data-axis="1"]', 'Enter');
      await waitIdle(page);
      assert.deepEqual((await page.evaluate(() => window.__viewer.state())).programs, [3]);
      const rows = await page.$$eval('#tl-ops-panel .tl-op', (els) =>
        els.map((e) => Array.from(e.children).map((c) => c.textContent)),
      );
      assert.deepEqual(
        rows.map((r) => [r[1], r[2], r[3]]),
        [
          [String(aLine), 'a_ptr', 'load (tl.load)'],
          [String(bLine), 'b_ptr', 'load (tl.load)'],
          [String(aLine), 'a_ptr', 'load (tl.load)'],
          [String(bLine), 'b_ptr', 'load (tl.load)'],
          [String(aLine), 'a_ptr', 'load (tl.load)'],
          [String(bLine), 'b_ptr', 'load (tl.load)'],
          [String(cLine), 'c_ptr', 'store (tl.store)'],
        ],
      );
      // program (1, 1): rows 32:48 of a (16 of 32 rows), so 16 x 32 = 512 of 1024 lanes; then 16 x 8 in the last block
      assert.deepEqual(
        rows.map((r) => r[4]),
        ['512/1024', '256/1024', '512/1024', '256/1024', '128/1024', '64/1024', '128/1024'],
      );
      assert.equal(
        await page.$eval('#tl-ops-panel h2', (e) => e.textContent),
        'Memory operations of program (1,1), in order',
      );
      // clicking an operation follows its line at its iteration
      await page.click('#tl-ops-panel .tl-op:nth-of-type(5)');
      await waitIdle(page);
      const st = await page.evaluate(() => window.__viewer.state());
      assert.deepEqual([st.follow.line, st.iteration], [bLine, 1]);
      // Performance: lines with mask / sector efficiency and reuse; the GPU picker changes the estimate
      const perf = await page.$$eval('#tl-perf .tl-perf tr', (els) =>
        els.slice(1).map((e) => Array.from(e.children).map((c) => c.textContent)),
      );
      assert.deepEqual(perf[0], [String(aLine), 'a_ptr', 'load', '27.0 KB', '56.3%', '100.0%', '2.00×']);
      assert.equal(perf[3][1], 'tl.dot');
      const h100 = await page.$eval('#tl-roofline', (e) => e.firstChild.textContent);
      assert.match(h100, /^roofline estimate on H100 SXM: ≥ [\d.]+ ns — memory-bound$/);
      await page.selectOption('#tl-gpu', 'rtx4090');
      await waitIdle(page);
      const rtx = await page.$eval('#tl-roofline', (e) => e.firstChild.textContent);
      assert.match(rtx, /^roofline estimate on RTX 4090: ≥ [\d.]+ ns — memory-bound$/);
      assert.ok(parseFloat(rtx.split('≥ ')[1]) > parseFloat(h100.split('≥ ')[1]));
      assert.equal((await page.evaluate(() => window.__viewer.state())).gpu, 'rtx4090');
      await screenshot(page, `programs_performance_matmul_${theme[0]}`);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.context().close();
    }
  });
}

test('Values beyond the colour budget: downsampled, and the page says so', async () => {
  // a value map as value_map sends it for a 100,000-element tensor: 25,000 colours, 4 elements each
  const numel = 100000,
    block = 4,
    cells = numel / block;
  const q = new Uint8Array(cells);
  for (let i = 0; i < cells; i++) q[i] = Math.floor((i / cells) * 254);
  const F = '/k.py';
  const fix = {
    kernels: {
      file: F,
      status: 'ok',
      kernels: [
        {
          name: 'k',
          file: F,
          line: 1,
          launches: [
            { index: 0, grid: [1, 1, 1], file: F, line: 9, programs: 1, tensors: [{ index: 0, name: 'x_ptr' }] },
          ],
        },
      ],
    },
    maps: {
      '0/0': {
        launch: { index: 0, kernel: 'k', grid: [1, 1, 1] },
        tensor: { index: 0, name: 'x_ptr', shape: [numel], strides: [1], dtype: 'float32', itemsize: 4, numel },
        sites: [{ id: 0, file: F, line: 3, col: 4, end_line: 3, end_col: 20, kind: 'load', op: 'tl.load' }],
        accesses: [
          {
            site: 0,
            program: [0, 0, 0],
            touched: { runs: [0, numel] },
            masked: null,
            oob: null,
            rows: [0],
            executions: 1,
          },
        ],
      },
    },
    values: { '0/0': null },
    extra: {
      valueMap: {
        '0/0/after': {
          when: 'after',
          dtype: 'float32',
          numel,
          lo: 0,
          hi: 1,
          block,
          cells,
          q: Buffer.from(q).toString('base64'),
          before: false,
          after: true,
          histograms: [
            { file: F, line: 3, lo: 0, hi: 1, counts: Array(32).fill(numel / 32), elements: numel, nonfinite: 0 },
          ],
        },
      },
    },
  };
  const page = await openPage(browser, server, { fixture: fix });
  try {
    await page.selectOption('#tl-values', 'after');
    await page.waitForFunction(() => {
      const v = window.__viewer.values('x_ptr');
      return v && v.histogram;
    });
    assert.equal(
      await page.$eval('.tl-downsampled', (e) => e.textContent),
      'downsampled: each colour is the mean of 4 neighbouring elements (100,000 elements, 25,000 colours sent); the tooltip shows exact values',
    );
    // values rise with the index: the first element is the darkest colour, later ones brighter
    const lum = (p) => 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
    const at = async (i) => lum((await cellState(page, 'x_ptr', i)).pixel);
    assert.deepEqual((await cellState(page, 'x_ptr', 0)).pixel.slice(0, 3), [68, 1, 84]);
    const [a, b, c] = [await at(0), await at(numel / 2), await at(numel - 4096)];
    assert.ok(a < b && b < c, `${a} < ${b} < ${c}`);
    assert.deepEqual(page.errors, []);
  } finally {
    await page.context().close();
  }
});
