// Real engine results (triton_lens.analysis.access_map on corpus scripts) rendered by the page.
// Needs the project's venv with the engine: skipped, saying why, when it is not there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openPage, cellState, screenshot } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PY = process.env.TRITON_LENS_PYTHON || path.join(ROOT, '.venv/bin/python');
const CORPUS = process.env.TRITON_LENS_CORPUS || path.join(ROOT, 'tests/corpus');

function engineMissing() {
  if (!fs.existsSync(PY)) return `no python at ${PY}`;
  if (!fs.existsSync(CORPUS)) return `no corpus at ${CORPUS}`;
  try {
    execFileSync(PY, ['-c', 'import triton_lens.analysis.access_map, triton_lens.trace_engine.process.runner'], {
      stdio: 'pipe',
    });
  } catch {
    return 'triton_lens.analysis.access_map does not import';
  }
  return null;
}
const missing = engineMissing();

function engineFixture(script) {
  const out = execFileSync(PY, [path.join(HERE, 'engine_fixture.py'), path.join(CORPUS, script)], {
    maxBuffer: 64 << 20,
    timeout: 180000,
  });
  return JSON.parse(out.toString());
}

let server;
let browser;
before(async () => {
  if (missing) return;
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('engine: vector_add.py as the engine records it', { skip: missing || false }, async () => {
  const fix = engineFixture('vector_add.py');
  const page = await openPage(browser, server, { fixture: fix });
  try {
    const file = path.join(CORPUS, 'vector_add.py');
    assert.equal(await page.$eval('#tl-follow', (e) => e.textContent), 'following line 12: tl.load(x_ptr …)');
    assert.deepEqual((await page.evaluate(() => window.__viewer.state())).tensors, ['x_ptr', 'y_ptr', 'z_ptr']);
    const a = await cellState(page, 'x_ptr', 0);
    const b = await cellState(page, 'x_ptr', 127);
    assert.deepEqual([a.drawn, a.program, b.drawn, b.program], ['followed', 0, 'followed', 1]);
    assert.equal((await cellState(page, 'z_ptr', 64)).drawn, 'other');
    assert.equal(await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.hidden), true);
    // the overview lists the tensors: no probing past the last one
    const reqs = await page.evaluate(() =>
      window.__msgs.filter((m) => m.method === 'accessMap').map((m) => m.params.tensor),
    );
    assert.deepEqual(reqs, [0, 1, 2]);
    await page.evaluate((f) => window.postMessage({ type: 'cursor', file: f, line: 15 }, '*'), file);
    await page.waitForFunction(() => window.__viewer.state().follow.line === 15);
    assert.equal((await cellState(page, 'z_ptr', 64)).drawn, 'followed');
    const pt = await page.evaluate(() => window.__viewer.cellPoint('z_ptr', 5));
    await page.mouse.move(pt.x, pt.y);
    await page.waitForFunction(() =>
      Array.from(document.querySelector('.tl-tooltip').children).some((c) => c.textContent === 'value: 10'),
    );
    assert.match(await page.$eval('.tl-tooltip', (e) => e.textContent), /line 15 tl\.store: program 0/);
    await screenshot(page, 'engine_vector_add');
    assert.deepEqual(page.errors, []);
  } finally {
    await page.context().close();
  }
});

test(
  'engine: oob_strided_view.py puts the 700 padding lanes right of the grid',
  { skip: missing || false },
  async () => {
    const fix = engineFixture('oob_strided_view.py');
    const page = await openPage(browser, server, { fixture: fix });
    try {
      assert.equal(
        await page.$eval('[data-tensor="0"] .tl-oob', (e) => e.textContent),
        '⚠ out of bounds — line 12: 700 out-of-bounds addresses (700 in padding)',
      );
      const lay = await page.evaluate(() => window.__viewer.layout('x_ptr'));
      assert.equal(lay.Br, 28);
      const pad = await cellState(page, 'x_ptr', { offset: 100 });
      assert.deepEqual([pad.drawn, pad.element], ['oob-followed', false]);
      // program r reads offsets r*100 .. r*100+99: row 1 (offsets 128..227) is split between programs 1 and 2
      const c71 = await cellState(page, 'x_ptr', [1, 71]);
      const c72 = await cellState(page, 'x_ptr', [1, 72]);
      assert.deepEqual([c71.drawn, c71.program, c72.drawn, c72.program], ['followed', 1, 'followed', 2]);
      await screenshot(page, 'engine_oob_strided_view');
      assert.deepEqual(page.errors, []);
    } finally {
      await page.context().close();
    }
  },
);
