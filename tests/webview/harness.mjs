// Test harness: a static server for extension/webview on 127.0.0.1 (the page template filled the
// way a host must fill it, and a fixture-backed HTTP API), headless Debian Chromium through
// playwright-core, and a page opened under a stubbed VS Code host or the HTTP host.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { answer } from './fakehost.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WEBVIEW = path.resolve(HERE, '../../extension/webview');
export const ARTIFACTS = path.join(HERE, 'artifacts');
const MIME = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.md': 'text/plain' };

export function loadFixture(name) {
  return JSON.parse(fs.readFileSync(path.join(HERE, 'fixtures', `${name}.json`), 'utf8'));
}

/** Fill the template as a host does. */
export function renderTemplate({ nonce, cspSource, base }) {
  return fs
    .readFileSync(path.join(WEBVIEW, 'index.html'), 'utf8')
    .replaceAll('{{nonce}}', nonce)
    .replaceAll('{{cspSource}}', cspSource)
    .replaceAll('{{base}}', base);
}

/**
 * Start the server. `server.fixture` is what the HTTP API answers from (settable);
 * `server.push(event)` sends an event on api/events; `server.reveals` collects api/reveal bodies.
 */
export async function startServer() {
  const sse = new Set();
  const state = { fixture: null, reveals: [], requests: [] };
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const p = url.pathname;
    if (p === '/' || p === '/index.html') {
      const nonce = crypto.randomBytes(16).toString('base64');
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(renderTemplate({ nonce, cspSource: "'self'", base: '/webview/' }));
      return;
    }
    if (p === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (p.startsWith('/webview/')) {
      const rel = path.normalize(decodeURIComponent(p.slice('/webview/'.length)));
      const file = path.join(WEBVIEW, rel);
      if (!file.startsWith(WEBVIEW + path.sep) || !fs.existsSync(file) || !MIME[path.extname(file)]) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': MIME[path.extname(file)], 'Cache-Control': 'no-store' });
      fs.createReadStream(file).pipe(res);
      return;
    }
    if (p === '/api/events') {
      res.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
      });
      res.write(': hello\n\n');
      sse.add(res);
      req.on('close', () => sse.delete(res));
      return;
    }
    if (p.startsWith('/api/') && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        let params;
        try {
          params = body ? JSON.parse(body) : {};
        } catch {
          res.writeHead(400).end();
          return;
        }
        const method = p.slice('/api/'.length);
        state.requests.push({ method, params });
        if (method === 'reveal') {
          state.reveals.push(params);
          res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
          return;
        }
        try {
          const result = answer(state.fixture, method, params);
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(result));
        } catch (e) {
          res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: e.message }));
        }
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    get fixture() {
      return state.fixture;
    },
    set fixture(f) {
      state.fixture = f;
    },
    reveals: state.reveals,
    requests: state.requests,
    push(ev) {
      for (const r of sse) r.write(`data: ${JSON.stringify(ev)}\n\n`);
    },
    async close() {
      for (const r of sse) r.end();
      await new Promise((resolve) => srv.close(resolve));
    },
  };
}

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

// Runs in the page before its scripts: a VS Code webview API answering from the fixture.
function vscodeStub({ fixture, state, answerSrc }) {
  const answerFn = new Function(`return (${answerSrc})`)();
  window.__fixture = fixture;
  window.__msgs = [];
  window.__csp = [];
  window.__vsState = state || null;
  window.__hold = false; // tests may hold responses to check ordering
  document.addEventListener('securitypolicyviolation', (e) =>
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
  );
  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error('acquireVsCodeApi called twice');
    acquired = true;
    return {
      postMessage(m) {
        window.__msgs.push(JSON.parse(JSON.stringify(m)));
        if (m && m.type === 'request') {
          let reply;
          try {
            reply = { type: 'response', id: m.id, result: answerFn(window.__fixture, m.method, m.params) };
          } catch (e) {
            reply = { type: 'response', id: m.id, error: { message: e.message } };
          }
          setTimeout(() => window.postMessage(reply, '*'), 0);
        }
      },
      getState() {
        return window.__vsState;
      },
      setState(s) {
        window.__vsState = JSON.parse(JSON.stringify(s));
      },
    };
  };
}

function httpInit() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) =>
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
  );
}

/**
 * Open the page. mode 'vscode' (stubbed acquireVsCodeApi answering from `fixture`) or 'http'
 * (the server's API answers from server.fixture). Collects page errors and dialogs.
 */
export async function openPage(
  browser,
  server,
  { fixture, mode = 'vscode', state = null, viewport = { width: 1000, height: 900 }, colorScheme = 'dark' } = {},
) {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  page.errors = [];
  page.dialogs = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(m.text());
  });
  page.on('dialog', (d) => {
    page.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  if (mode === 'vscode') {
    await page.addInitScript(vscodeStub, { fixture, state, answerSrc: answer.toString() });
  } else {
    server.fixture = fixture;
    await page.addInitScript(httpInit);
  }
  await page.goto(server.url);
  await waitIdle(page);
  return page;
}

/** Wait until the page has loaded its data and rendered. */
export async function waitIdle(page) {
  await page.waitForFunction(() => window.__viewer && window.__viewer.idle, null, { timeout: 10000 });
}

/** Wait until the tooltip has a line with exactly this text. */
export async function waitTipLine(page, line) {
  await page.waitForFunction(
    (l) => Array.from(document.querySelector('.tl-tooltip').children).some((c) => c.textContent === l),
    line,
    { timeout: 5000 },
  );
}

/** Post a host event into the page (as VS Code would) and wait for the page to settle. */
export async function sendEvent(page, ev) {
  const before = await page.evaluate(() => window.__viewer.eventCount);
  await page.evaluate((m) => window.postMessage(m, '*'), ev);
  await page.waitForFunction((n) => window.__viewer.idle && window.__viewer.eventCount > n, before, { timeout: 10000 });
}

export async function cellState(page, tensor, index) {
  return page.evaluate(([t, i]) => window.__viewer.cellState(t, i), [tensor, index]);
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
