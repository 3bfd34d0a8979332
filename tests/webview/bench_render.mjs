// Render benchmark of the access-map page in headless Chromium (not a test: it prints timings).
//   node tests/webview/bench_render.mjs            print
//   node tests/webview/bench_render.mjs --write    also write bench/results/webview_render_<date>.txt
// Each case is a synthetic launch whose access maps are built here in the documented ENC format;
// the time is the page's own render (rasterise every tensor + compose pixels + putImageData),
// measured in the page with performance.now() around a full redraw, after one warm-up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openPage, CHROMIUM } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPEAT = 15;
const FILE = '/bench/k.py';

function site(id, line, kind) {
  return { id, file: FILE, line, col: 4, end_line: line, end_col: 40, kind, op: `tl.${kind}` };
}

/** A launch with one tensor of `shape`, `programs` programs each owning a contiguous block. */
function blockCase({ shape, programs, masked = 0, bits = false }) {
  const numel = shape.reduce((a, b) => a * b, 1);
  const per = Math.ceil(numel / programs);
  const accesses = [];
  for (let p = 0; p < programs; p++) {
    const s = p * per;
    const n = Math.max(0, Math.min(per, numel - s));
    accesses.push({ site: 0, program: [p, 0, 0], touched: n ? { runs: [s, n] } : null,
      masked: masked ? { runs: [s + per, masked] } : null, oob: null });
    accesses.push({ site: 1, program: [p, 0, 0], touched: n ? { runs: [s, n] } : null, masked: null, oob: null });
  }
  if (bits) {
    // one gather touching every third element, as a bitmap over the whole tensor
    const bytes = new Uint8Array(Math.ceil(numel / 8));
    for (let i = 0; i < numel; i += 3) bytes[i >> 3] |= 1 << (i & 7);
    accesses.push({ site: 2, program: [0, 0, 0], touched: { lo: 0, n: numel, bits: Buffer.from(bytes).toString('base64') }, masked: null, oob: null });
  }
  const strides = shape.map((_, k) => shape.slice(k + 1).reduce((a, b) => a * b, 1));
  return {
    kernels: { file: FILE, status: 'ok', kernels: [{ name: 'k', file: FILE, line: 1,
      launches: [{ index: 0, grid: [programs, 1, 1], file: FILE, line: 50, programs, tensors: [{ index: 0, name: 'x_ptr' }] }] }] },
    maps: { '0/0': { launch: { index: 0, kernel: 'k', grid: [programs, 1, 1] },
      tensor: { index: 0, name: 'x_ptr', shape, strides, dtype: 'float32', itemsize: 4, numel },
      sites: [site(0, 12, 'load'), site(1, 15, 'store'), site(2, 18, 'load')], accesses } },
    values: { '0/0': null },
  };
}

const CASES = [
  ['1-D 1M elements, 1024 programs x 1024 lanes', { shape: [1 << 20], programs: 1024 }],
  ['2-D 1024x1024, 1024 programs (one row each) + masked lanes', { shape: [1024, 1024], programs: 1024, masked: 24 }],
  ['2-D 1024x1024 + a bitmap gather (every 3rd element)', { shape: [1024, 1024], programs: 256, bits: true }],
  ['2-D 2048x2048 (4M elements), 4096 programs', { shape: [2048, 2048], programs: 4096 }],
  ['3-D 16x256x256 (1M elements, one 64K slice shown)', { shape: [16, 256, 256], programs: 1024 }],
];

const stats = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
};

const server = await startServer();
const browser = await launchBrowser();
const lines = [];
try {
  for (const [label, spec] of CASES) {
    const t0 = Date.now();
    const page = await openPage(browser, server, { fixture: blockCase(spec), viewport: { width: 1200, height: 1000 } });
    const loadMs = Date.now() - t0;
    const res = await page.evaluate((n) => {
      const v = window.__viewer;
      v.rerender(); // warm-up
      const all = [];
      for (let i = 0; i < n; i++) all.push(v.rerender());
      const lay = v.layout('x_ptr');
      return { all, geom: lay.geom, cells: (lay.R + lay.Bt + lay.Bb) * (lay.C + lay.Br) };
    }, REPEAT);
    // the same with one program selected (single-colour path)
    await page.click('button[data-pid="1"]');
    const one = await page.evaluate((n) => Array.from({ length: n }, () => window.__viewer.rerender()), REPEAT);
    const a = stats(res.all);
    const b = stats(one);
    const g = res.geom;
    const ax = (x) => (x.down > 1 ? `${x.down} cells/px` : `${x.up} px/cell`);
    lines.push(`${label}\n    cells ${res.cells.toLocaleString()}, canvas ${g.x.px}x${g.y.px} px (x: ${ax(g.x)}, y: ${ax(g.y)})\n` +
      `    render, all programs:  median ${a.median.toFixed(1)} ms (min ${a.min.toFixed(1)}, max ${a.max.toFixed(1)}, n=${REPEAT})\n` +
      `    render, one program:   median ${b.median.toFixed(1)} ms (min ${b.min.toFixed(1)}, max ${b.max.toFixed(1)}, n=${REPEAT})\n` +
      `    page load incl. JSON transfer and decode: ${loadMs} ms`);
    console.log(lines[lines.length - 1]);
    await page.context().close();
  }
} finally {
  await browser.close();
  await server.close();
}

let chromium = '';
try { chromium = execFileSync(CHROMIUM, ['--version']).toString().trim(); } catch { chromium = CHROMIUM; }
const header = [
  'Triton Lens access-map page: render benchmark (tests/webview/bench_render.mjs)',
  `date: ${new Date().toISOString()}`,
  `machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}`,
  `browser: ${chromium} (headless, --disable-gpu: software canvas); node ${process.version}`,
  'render = rasterise the access sets of every tensor into per-cell typed arrays + compose downsampled',
  'pixels + putImageData, timed in the page (performance.now) over a full redraw of the launch.',
  '',
];
if (process.argv.includes('--write')) {
  const dir = path.resolve(HERE, '../../bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `webview_render_${new Date().toISOString().slice(0, 10)}.txt`);
  fs.writeFileSync(file, `${header.join('\n')}${lines.join('\n')}\n`);
  console.log(`wrote ${file}`);
}
