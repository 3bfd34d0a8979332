// The page as the standalone browser viewer loads it: no acquireVsCodeApi, so it talks to the
// HTTP API (POST api/<method>, EventSource api/events, POST api/reveal) served by the harness.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, loadFixture, cellState, waitIdle } from './harness.mjs';

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

test('HTTP host: requests over fetch, events over EventSource, reveal over POST, state in localStorage', async () => {
  server.requests.length = 0;
  const page = await openPage(browser, server, { fixture: loadFixture('vector_add'), mode: 'http' });
  try {
    assert.equal(await page.evaluate(() => window.__viewer.hostKind), 'http');
    assert.deepEqual(
      server.requests
        .filter((r) => r.method === 'kernels' || r.method === 'accessMap')
        .slice(0, 5)
        .map((r) => [r.method, r.params.tensor]),
      [
        ['kernels', undefined],
        ['accessMap', 0],
        ['accessMap', 1],
        ['accessMap', 2],
        ['accessMap', 3],
      ],
    );
    // the Performance and tl.dot panels' data: POST api/performance and api/dots (a 404 here: no such data)
    assert.deepEqual(
      server.requests.filter((r) => r.method === 'performance' || r.method === 'dots').map((r) => [r.method, r.params]),
      [
        ['performance', { launch: 0 }],
        ['dots', { launch: 0 }],
      ],
    );
    assert.match(
      await page.$eval('#tl-perf', (e) => e.textContent),
      /Performance.*not available: no performance for 0/,
    );
    assert.equal((await cellState(page, 'x_ptr', 10)).drawn, 'followed');

    // an event pushed on api/events moves the followed line
    await page.waitForFunction(() => window.__viewer.idle);
    const before = await page.evaluate(() => window.__viewer.eventCount);
    // the EventSource may still be connecting: push until the page has handled one
    for (let i = 0; i < 50; i++) {
      server.push({ type: 'cursor', file: VA, line: 13 });
      const got = await page
        .waitForFunction((n) => window.__viewer.eventCount > n, before, { timeout: 200 })
        .then(
          () => true,
          () => false,
        );
      if (got) break;
    }
    await waitIdle(page);
    assert.equal(await page.$eval('#tl-follow', (e) => e.textContent), 'following line 13: tl.load(y_ptr …)');
    assert.equal((await cellState(page, 'y_ptr', 10)).drawn, 'followed');

    // click a cell: POST api/reveal
    const pt = await page.evaluate(() => window.__viewer.cellPoint('y_ptr', 100));
    await page.mouse.click(pt.x, pt.y);
    await page.waitForFunction(() => true);
    for (let i = 0; i < 50 && !server.reveals.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(server.reveals, [{ file: VA, line: 13 }]);

    // hover: values over POST api/values
    await page.mouse.move(pt.x, pt.y + 1);
    await page.waitForFunction(() =>
      Array.from(document.querySelector('.tl-tooltip').children).some((c) => c.textContent === 'value: 100'),
    );
    assert.deepEqual(
      server.requests.filter((r) => r.method === 'values').map((r) => r.params),
      [{ launch: 0, tensor: 1, start: 0, count: 128 }],
    );

    // a selection survives a reload through localStorage
    await page.click('button[data-pid="1"]');
    await page.reload();
    await waitIdle(page);
    const st = await page.evaluate(() => window.__viewer.state());
    assert.deepEqual(st.programs, [1]);
    assert.deepEqual(st.follow, { file: VA, line: 13 });
    // the only failed loads are the 404s that end the probing for tensors 0, 1, 2, ... (3 is none)
    assert.deepEqual(
      page.errors.filter((e) => !/status of 404/.test(e)),
      [],
    );
    assert.deepEqual(await page.evaluate(() => window.__csp), []);
  } finally {
    await page.context().close();
  }
});

test('HTTP host: an error status with a JSON message is shown', async () => {
  const fix = loadFixture('vector_add');
  fix.kernels.kernels[0].launches[0].tensors = [
    { index: 0, name: 'x_ptr' },
    { index: 7, name: 'gone' },
  ];
  const page = await openPage(browser, server, { fixture: fix, mode: 'http' });
  try {
    // the overview lists the tensors: exactly those are requested; the missing one shows its error
    assert.deepEqual(await page.evaluate(() => window.__viewer.state().tensors), ['x_ptr', 'gone']);
    assert.equal(
      await page.$eval('[data-tensor="7"] .tl-card-status', (e) => e.textContent),
      'no access map: no tensor 7 in launch 0',
    );
    assert.equal((await cellState(page, 'x_ptr', 1)).drawn, 'followed');
  } finally {
    await page.context().close();
  }
});
