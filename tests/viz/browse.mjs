// Drive the standalone viewer in headless Chromium and print what it shows, as JSON (tests/viz).
//
//   node browse.mjs '{"url": "http://127.0.0.1:PORT/", "chromium": "/usr/bin/chromium",
//                     "numel": 128, "hover": {"tensor": "x_ptr", "index": 5},
//                     "follow": [15, 16], "probes": [{"tensor": "x_ptr", "index": {"offset": 1000}}],
//                     "clickCell": {"tensor": "z_ptr", "index": 70}}'
//
// Output: {state, lines, cells: {tensor: {program: [[first, last], ...]}}, tooltip, follow, revealed,
//          source: {lines, marked}, api: [{path, status, bytes, encoding, ms}], console: [...]}
import { chromium } from 'playwright-core';

const spec = JSON.parse(process.argv[2]);
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const out = { api: [], console: [], errors: [] };
const pending = [];
let closing = false;
let navStart = Date.now();
const browser = await chromium.launch({
  executablePath: spec.chromium || '/usr/bin/chromium',
  headless: true,
  args: ARGS,
});
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => out.errors.push(String(e)));
  const started = new Map();
  page.on('request', (r) => started.set(r, Date.now()));
  page.on('requestfinished', (r) => {
    const end = Date.now();
    // A request that finishes while the browser closes (the page's polling) is not the page's error.
    pending.push(record(r, end).catch((e) => closing || out.errors.push(`record: ${e}`)));
  });
  async function record(r, end) {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/api/') || u.pathname === '/api/events') return;
    const res = await r.response();
    const sizes = await r.sizes();
    const t = r.timing();
    out.api.push({
      path: u.pathname,
      status: res.status(),
      bytes: sizes.responseBodySize,
      frame: r.frame() === page.mainFrame() ? 'host' : 'page',
      encoding: (await res.allHeaders())['content-encoding'] || null,
      ms: t.responseEnd >= 0 ? t.responseEnd : Date.now() - started.get(r),
      start: started.get(r) - navStart,
      end: end - navStart,
      body: spec.keepBodies ? await res.text() : undefined,
    });
  }

  const t0 = Date.now();
  navStart = t0;
  await page.goto(spec.url, { waitUntil: 'load' });
  const frameEl = await page.waitForSelector('iframe#th-view');
  const frame = await frameEl.contentFrame();
  await frame.waitForFunction(() => window.__viewer && window.__viewer.idle && window.__viewer.renderCount > 0, null, {
    timeout: 30000,
  });
  out.loadMs = Date.now() - t0;
  out.state = await frame.evaluate(() => window.__viewer.state());
  // Resource timing of the page's own api/ requests, in the page's clock (ms since its navigation).
  out.resources = await frame.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname.startsWith('/api/') && !e.name.endsWith('/api/events'))
      .map((e) => ({
        path: new URL(e.name).pathname,
        start: e.startTime,
        requestStart: e.requestStart,
        responseStart: e.responseStart,
        end: e.responseEnd,
        transfer: e.transferSize,
        encoded: e.encodedBodySize,
        decoded: e.decodedBodySize,
        server: (e.serverTiming || []).reduce((a, t) => a + t.duration, 0),
      })),
  );
  out.lines = await frame.evaluate(() =>
    Array.from(document.querySelectorAll('#tl-line option')).map((o) => o.textContent),
  );
  out.kernelOptions = await frame.evaluate(() =>
    Array.from(document.querySelectorAll('#tl-kernel option')).map((o) => o.textContent),
  );

  // Which program each element of each tensor is drawn for: runs of flat indices per program.
  const cellsNow = () =>
    frame.evaluate(
      ({ tensors, numel }) => {
        const res = {};
        for (const t of tensors) {
          const byProg = {};
          let prev = null;
          for (let i = 0; i < numel; i++) {
            const c = window.__viewer.cellState(t, i);
            const key = c && c.program >= 0 ? String(c.program) : c ? c.drawn : 'none';
            const runs = (byProg[key] = byProg[key] || []);
            if (prev === key && runs.length && runs[runs.length - 1][1] === i - 1) runs[runs.length - 1][1] = i;
            else runs.push([i, i]);
            prev = key;
          }
          res[t] = byProg;
        }
        return res;
      },
      { tensors: out.state.tensors, numel: spec.numel },
    );
  if (spec.numel) out.cells = await cellsNow();

  // Follow each line in turn by clicking it in the source panel (a "cursor" event to the page).
  if (spec.follow) {
    out.followed = {};
    for (const line of spec.follow) {
      await page.click(`.th-ln[data-line="${line}"]`);
      await frame
        .waitForFunction(
          (ln) => {
            const s = window.__viewer.state();
            return s.follow && s.follow.line === ln && window.__viewer.idle;
          },
          line,
          { timeout: 10000 },
        )
        .catch(() => {});
      const s = await frame.evaluate(() => window.__viewer.state());
      const probes = spec.probes
        ? await frame.evaluate((ps) => ps.map((q) => window.__viewer.cellState(q.tensor, q.index)), spec.probes)
        : null;
      out.followed[line] = { follow: s.follow, header: s.header, cells: spec.numel ? await cellsNow() : null, probes };
    }
  }

  const box = await frameEl.boundingBox();
  if (spec.hover) {
    const p = await frame.evaluate(({ tensor, index }) => window.__viewer.cellPoint(tensor, index), spec.hover);
    await page.mouse.move(box.x + p.x, box.y + p.y);
    await frame
      .waitForFunction(
        () => {
          const n = document.querySelector('.tl-tooltip');
          return n && !n.hidden && !/value: …/.test(n.textContent);
        },
        null,
        { timeout: 10000 },
      )
      .catch(() => {});
    out.tooltip = await frame.evaluate(() =>
      Array.from(document.querySelectorAll('.tl-tooltip > div')).map((d) => d.textContent),
    );
    await page.mouse.move(1, 1);
  }

  // The source panel of the host page.
  out.source = await page.evaluate(() => ({
    lines: document.querySelectorAll('.th-ln').length,
    marked: Array.from(document.querySelectorAll('.th-ln.th-load, .th-ln.th-store, .th-ln.th-atomic')).map((e) => [
      Number(e.dataset.line),
      Array.from(e.classList)
        .filter((c) => /^th-(load|store|atomic)$/.test(c))
        .map((c) => c.slice(3)),
    ]),
    revealed: Array.from(document.querySelectorAll('.th-revealed')).map((e) => Number(e.dataset.line)),
  }));

  if (spec.clickCell) {
    const p = await frame.evaluate(({ tensor, index }) => window.__viewer.cellPoint(tensor, index), spec.clickCell);
    await page.mouse.click(box.x + p.x, box.y + p.y);
    await page.waitForFunction(() => document.querySelector('.th-revealed'), null, { timeout: 10000 }).catch(() => {});
    out.revealed = await page.evaluate(() =>
      Array.from(document.querySelectorAll('.th-revealed')).map((e) => Number(e.dataset.line)),
    );
  }
  if (spec.screenshot) await page.screenshot({ path: spec.screenshot });
  // Every request that finished is recorded, including those that finished while earlier ones were.
  for (let n = -1; n !== pending.length;) {
    n = pending.length;
    await Promise.allSettled(pending);
  }
} finally {
  closing = true;
  await browser.close();
}
for (const a of out.api) if (a.body === undefined) delete a.body;
process.stdout.write(JSON.stringify(out));
