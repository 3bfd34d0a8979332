// Render benchmark of the access-map page in headless Chromium (not a test: it prints timings).
//   node tests/webview/bench_render.mjs            print
//   node tests/webview/bench_render.mjs --write    also write bench/results/webview_render_<date>.txt
// Each case is a synthetic launch whose access maps are built here in the documented ENC format;
// the time is the page's own render (rasterise every tensor + compose pixels + putImageData),
// measured in the page with performance.now() around a full redraw, after one warm-up.
import fs from 'node:fs';
import os from 'node:os';
import zlib from 'node:zlib';
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
function blockCase({ shape, programs, masked = 0, bits = false, steps = 0, values = false }) {
  const numel = shape.reduce((a, b) => a * b, 1);
  const per = Math.ceil(numel / programs);
  const accesses = [];
  for (let p = 0; p < programs; p++) {
    const s = p * per;
    const n = Math.max(0, Math.min(per, numel - s));
    const a = {
      site: 0,
      program: [p, 0, 0],
      touched: n ? { runs: [s, n] } : null,
      masked: masked ? { runs: [s + per, masked] } : null,
      oob: null,
      rows: [p],
    };
    if (steps) {
      // a loop: the program's block in `steps` iterations (what access_map sends as `steps`)
      const k = Math.ceil(n / steps);
      a.executions = steps;
      a.rows = Array.from({ length: steps }, (_, i) => p * steps + i);
      a.steps = Array.from({ length: steps }, (_, i) => ({
        lanes: k,
        active: k,
        touched: { runs: [s + i * k, Math.max(0, Math.min(k, n - i * k))] },
        masked: null,
        oob: null,
      }));
    }
    accesses.push(a);
    accesses.push({ site: 1, program: [p, 0, 0], touched: n ? { runs: [s, n] } : null, masked: null, oob: null });
  }
  if (bits) {
    // one gather touching every third element, as a bitmap over the whole tensor
    const bytes = new Uint8Array(Math.ceil(numel / 8));
    for (let i = 0; i < numel; i += 3) bytes[i >> 3] |= 1 << (i & 7);
    accesses.push({
      site: 2,
      program: [0, 0, 0],
      touched: { lo: 0, n: numel, bits: Buffer.from(bytes).toString('base64') },
      masked: null,
      oob: null,
    });
  }
  const strides = shape.map((_, k) => shape.slice(k + 1).reduce((a, b) => a * b, 1));
  const extra = { valueMap: {} };
  if (values) {
    // what value_map sends: at most 32,768 colours (8-bit), each the mean of `block` elements
    const block = Math.max(1, Math.ceil(numel / 32768));
    const cells = Math.ceil(numel / block);
    const q = new Uint8Array(cells);
    for (let i = 0; i < cells; i++) q[i] = ((i * 2654435761) >>> 24) % 255;
    extra.valueMap['0/0/after'] = {
      when: 'after',
      dtype: 'float32',
      numel,
      lo: -1,
      hi: 1,
      block,
      cells,
      q: Buffer.from(q).toString('base64'),
      before: false,
      after: true,
      histograms: [
        { file: FILE, line: 12, lo: -1, hi: 1, counts: Array(32).fill(numel / 32), elements: numel, nonfinite: 0 },
      ],
    };
  }
  return {
    extra,
    kernels: {
      file: FILE,
      status: 'ok',
      kernels: [
        {
          name: 'k',
          file: FILE,
          line: 1,
          launches: [
            {
              index: 0,
              grid: [programs, 1, 1],
              file: FILE,
              line: 50,
              programs,
              tensors: [{ index: 0, name: 'x_ptr' }],
            },
          ],
        },
      ],
    },
    maps: {
      '0/0': {
        launch: { index: 0, kernel: 'k', grid: [programs, 1, 1] },
        tensor: { index: 0, name: 'x_ptr', shape, strides, dtype: 'float32', itemsize: 4, numel },
        sites: [site(0, 12, 'load'), site(1, 15, 'store'), site(2, 18, 'load')],
        accesses,
      },
    },
    values: { '0/0': null },
  };
}

const CASES = [
  ['1-D 1M elements, 1024 programs x 1024 lanes', { shape: [1 << 20], programs: 1024 }],
  ['2-D 1024x1024, 1024 programs (one row each) + masked lanes', { shape: [1024, 1024], programs: 1024, masked: 24 }],
  ['2-D 1024x1024 + a bitmap gather (every 3rd element)', { shape: [1024, 1024], programs: 256, bits: true }],
  ['2-D 2048x2048 (4M elements), 4096 programs', { shape: [2048, 2048], programs: 4096 }],
  ['3-D 16x256x256 (1M elements, 16 slices of 64K shown)', { shape: [16, 256, 256], programs: 1024 }],
  [
    '2-D 1024x1024, Values on (32,768 colours) + 4 loop steps per access, iteration 1 shown',
    { shape: [1024, 1024], programs: 256, steps: 4, values: true },
  ],
  [
    '1-D 1M elements, Values on + 4 loop steps per access, iteration 1 shown',
    { shape: [1 << 20], programs: 1024, steps: 4, values: true },
  ],
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
    const fixture = blockCase(spec);
    const page = await openPage(browser, server, { fixture, viewport: { width: 1200, height: 1000 } });
    if (spec.values) {
      await page.selectOption('#tl-values', 'after');
      await page.waitForFunction(() => {
        const v = window.__viewer.values('x_ptr');
        return v && v.cells > 0;
      });
    }
    if (spec.steps) {
      await page.$eval('#tl-iteration', (e) => {
        e.value = '1';
        e.dispatchEvent(new Event('input'));
      });
      await page.waitForFunction(() => window.__viewer.state().iteration === 1);
    }
    const loadMs = Date.now() - t0;
    const mapJson = JSON.stringify(fixture.maps['0/0']);
    const valJson = fixture.extra.valueMap['0/0/after'] ? JSON.stringify(fixture.extra.valueMap['0/0/after']) : '';
    const wire = zlib.gzipSync(mapJson).length + (valJson ? zlib.gzipSync(valJson).length : 0);
    const res = await page.evaluate((n) => {
      const v = window.__viewer;
      v.rerender(); // warm-up
      const all = [];
      for (let i = 0; i < n; i++) all.push(v.rerender());
      const lay = v.layout('x_ptr');
      return { all, geom: lay.geom, cells: (lay.R + lay.Bt + lay.Bb) * (lay.C + lay.Br) };
    }, REPEAT);
    // Values + Iteration on vs off, interleaved in the same page (ratios hold on a loaded machine)
    let sideBySide = null;
    if (spec.values || spec.steps) {
      sideBySide = await page.evaluate((n) => {
        const v = window.__viewer;
        const sel = document.querySelector('#tl-values');
        const it = document.querySelector('#tl-iteration');
        const set = (values, iter) => {
          sel.value = values;
          sel.dispatchEvent(new Event('change'));
          it.value = String(iter);
          it.dispatchEvent(new Event('input'));
        };
        const off = [],
          on = [];
        for (let i = 0; i < n; i++) {
          set('off', -1);
          off.push(v.rerender());
          set('after', 1);
          on.push(v.rerender());
        }
        return { off, on };
      }, REPEAT);
    }
    // the same with one program selected (single-colour path)
    await page.click('button[data-pid="1"]');
    const one = await page.evaluate((n) => Array.from({ length: n }, () => window.__viewer.rerender()), REPEAT);
    const a = stats(res.all);
    const b = stats(one);
    const g = res.geom;
    const ax = (x) => (x.down > 1 ? `${x.down} cells/px` : `${x.up} px/cell`);
    lines.push(
      `${label}\n    cells ${res.cells.toLocaleString()}, canvas ${g.x.px}x${g.y.px} px (x: ${ax(g.x)}, y: ${ax(g.y)})\n` +
        `    render, all programs:  median ${a.median.toFixed(1)} ms (min ${a.min.toFixed(1)}, max ${a.max.toFixed(1)}, n=${REPEAT})\n` +
        `    render, one program:   median ${b.median.toFixed(1)} ms (min ${b.min.toFixed(1)}, max ${b.max.toFixed(1)}, n=${REPEAT})\n` +
        `    page load incl. JSON transfer and decode: ${loadMs} ms\n` +
        `    data: access map ${(mapJson.length / 1024).toFixed(0)} KB` +
        (valJson ? ` + value map ${(valJson.length / 1024).toFixed(0)} KB` : '') +
        `, ${(wire / 1024).toFixed(1)} KB gzipped (target <= 256 KB)` +
        (sideBySide
          ? (() => {
              const off = stats(sideBySide.off).median;
              const on = stats(sideBySide.on).median;
              return (
                `\n    side by side, interleaved (n=${REPEAT}): Values+Iteration off ${off.toFixed(1)} ms, on ${on.toFixed(1)} ms, ` +
                `ratio on/off ${(on / off).toFixed(2)}`
              );
            })()
          : ''),
    );
    console.log(lines[lines.length - 1]);
    await page.context().close();
  }
} finally {
  await browser.close();
  await server.close();
}

let chromium;
try {
  chromium = execFileSync(CHROMIUM, ['--version']).toString().trim();
} catch {
  chromium = CHROMIUM;
}
const header = [
  'Triton Lens access-map page: render benchmark (tests/webview/bench_render.mjs)',
  `date: ${new Date().toISOString()}`,
  `machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}`,
  `browser: ${chromium} (headless, --disable-gpu: software canvas); node ${process.version}`,
  'render = rasterise the access sets of every tensor into per-cell typed arrays + compose downsampled',
  'pixels + putImageData, timed in the page (performance.now) over a full redraw of the launch.',
  `load average (1, 5, 15 min) at the end: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (a shared machine: compare the side-by-side ratios)`,
  '',
];
if (process.argv.includes('--write')) {
  const dir = path.resolve(HERE, '../../bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `webview_render_${new Date().toISOString().slice(0, 10)}.txt`);
  fs.writeFileSync(file, `${header.join('\n')}${lines.join('\n')}\n`);
  console.log(`wrote ${file}`);
}
