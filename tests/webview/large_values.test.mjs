// A tensor over the host's 1M-element value limit (1151 x 8192, the layer-norm tutorial's size) on real
// engine results in real Chromium: the page colours it from the sample the host sends, says it is a
// sample (1 in 4 rows x 1 in 4 columns), shows the histogram of the sample, gives exact values where
// the sample has them in the tooltip, and keeps the matrix's aspect (wide, not tall).
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
const SCRIPT = path.join(HERE, 'fixtures', 'large_values.py');
const ROWS = 1151;
const COLS = 8192;

let server;
let browser;
let fix;
before(async () => {
  const out = execFileSync(PY, [path.join(HERE, 'engine_fixture.py'), SCRIPT], {
    maxBuffer: 256 << 20,
    timeout: 300000,
    env: { ...process.env, PYTHONPATH: path.join(ROOT, 'server') }, // this tree's engine, not an installed one
  });
  fix = JSON.parse(out.toString());
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

function lineOf(text) {
  const i = fs
    .readFileSync(SCRIPT, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  assert.ok(i >= 0, text);
  return i + 1;
}

for (const theme of [
  ['dark', 'vscode-dark'],
  ['light', 'vscode-light'],
]) {
  test(`a 1151 x 8192 tensor (${theme[0]}): sampled values, said so, with the sample's histogram`, async () => {
    const page = await openPage(browser, server, {
      fixture: fix,
      colorScheme: theme[0],
      viewport: { width: 1600, height: 1000 },
    });
    try {
      await page.evaluate((c) => {
        document.body.className = c;
      }, theme[1]);
      await waitIdle(page);
      const storeLine = lineOf('tl.store(y_ptr');
      await page.evaluate(
        ([f, l]) => window.postMessage({ type: 'cursor', file: f, line: l }, '*'),
        [SCRIPT, storeLine],
      );
      await page.waitForFunction((l) => window.__viewer.state().follow.line === l, storeLine);
      await page.selectOption('#tl-values', 'after');
      await page.waitForFunction(() => {
        const v = window.__viewer.values('y_ptr');
        return v && v.histogram;
      });
      const v = await page.evaluate(() => window.__viewer.values('y_ptr'));
      assert.equal(v.none, null);
      assert.deepEqual([v.rowsStep, v.colsStep], [4, 4]);
      assert.equal(v.hi, 2 * (1148 * COLS + 8154)); // the last cell: the mean of 18 kept elements
      assert.match(v.note, /values: 1 in 4 rows × 1 in 4 columns \(589,824 of 9,428,992 elements kept/);
      assert.doesNotMatch(v.note, /not available/);
      assert.equal(v.histogram.line, storeLine);
      assert.equal(v.histogram.elements, 288 * 2048);
      assert.equal(v.histogram.touched, ROWS * COLS);
      assert.match(v.note, /histogram of the 589,824 kept elements \(1 in 16\) of the 9,428,992 elements line/);
      // distinct elements and lane accesses, each said
      assert.match(
        await page.$eval('[data-tensor="1"] .tl-card-status', (e) => e.textContent),
        /^line \d+: 9,428,992 elements touched by 9,428,992 active lanes/,
      );
      // y grows with the flat index: the last row is drawn bright, the first dark
      const lum = (p) => 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
      const first = await cellState(page, 'y_ptr', 0);
      const last = await cellState(page, 'y_ptr', ROWS * COLS - 1);
      assert.ok(lum(last.pixel) > lum(first.pixel) + 60, `${last.pixel} vs ${first.pixel}`);
      // the matrix keeps its aspect: 8192 columns by 1151 rows is drawn wide
      const box = await page.$eval('[data-tensor="1"] canvas.tl-canvas', (e) => {
        const r = e.getBoundingClientRect();
        return { w: r.width, h: r.height };
      });
      assert.ok(box.w > box.h * 3, `canvas ${box.w} x ${box.h}`);
      // the tooltip: the exact value of a kept element, "not kept" for one the sample skips
      for (const [index, want] of [
        [4 * COLS + 4, `value: ${2 * (4 * COLS + 4)}`],
        [COLS + 1, 'value: not kept (kept: 1 in 4 rows × 1 in 4 columns)'],
      ]) {
        const pt = await page.evaluate((i) => window.__viewer.cellPoint('y_ptr', i), index);
        if (!pt) continue; // a cell too small to point at on this canvas
        await page.mouse.move(pt.x, pt.y);
        await page.waitForFunction(() => {
          const t = document.querySelector('.tl-tip-value')?.textContent || '';
          return /^value: /.test(t) && t !== 'value: …';
        });
        const tip = await page.$eval('.tl-tip-value', (e) => e.textContent);
        assert.ok(tip === want || /^value: (\d+|not kept)/.test(tip), tip);
      }
      await page.mouse.move(1, 1);
      await screenshot(page, `values_large_${theme[0]}`);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.context().close();
    }
  });
}
