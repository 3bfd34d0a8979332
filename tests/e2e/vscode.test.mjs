// End-to-end: the built .vsix installed in a real VS Code (code-server), driven through headless Chromium the
// way a kernel author uses it, on the shared kernel corpus. Screenshots of every step: tests/e2e/artifacts/.
//   node --test tests/e2e/vscode.test.mjs        (after `make vsix` and tests/e2e/setup.sh; `make test-e2e`)
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { extensionLogs, launchBrowser, loadEnv, REPO, startCodeServer } from './lib/codeServer.mjs';
import { norm, Workbench } from './lib/workbench.mjs';

const CORPUS = path.join(REPO, 'tests', 'corpus');
const VSIX = path.resolve(REPO, process.env.VSIX || 'triton-lens.vsix');
const WORK = path.join(REPO, '.e2e');
const ARTIFACTS = path.join(REPO, 'tests', 'e2e', 'artifacts');
const PYTHON = process.env.TRITON_LENS_PYTHON || path.join(REPO, '.venv', 'bin', 'python');

let env, cs, browser, page, wb;
const workspace = path.join(WORK, 'workspace');

before(async () => {
  env = loadEnv();
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
  assert.ok(fs.existsSync(CORPUS), `the kernel corpus is expected at ${CORPUS}`);
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.mkdirSync(workspace, { recursive: true });
  for (const f of ['vector_add.py', 'oob_missing_mask.py', 'softmax.py', 'cuda_script_without_gpu.py'])
    fs.copyFileSync(path.join(CORPUS, f), path.join(workspace, f));
  cs = await startCodeServer({
    env,
    dir: path.join(WORK, 'code-server'),
    vsix: VSIX,
    // full inlay hints (VS Code cuts them at 43 characters by default)
    settings: {
      'debug.openDebug': 'openOnDebugBreak',
      'debug.internalConsoleOptions': 'neverOpen',
      'editor.inlayHints.maximumLength': 0,
    },
    machineSettings: { 'tritonLens.python': PYTHON },
  });
  browser = await launchBrowser(env);
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  wb = new Workbench(page, ARTIFACTS);
  await wb.open(cs.url, workspace);
});

after(async () => {
  if (page) await wb.shot('final').catch(() => {});
  await browser?.close().catch(() => {});
  await cs?.stop();
  if (cs) {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.copyFileSync(cs.logFile, path.join(ARTIFACTS, 'code-server.log'));
    fs.writeFileSync(path.join(ARTIFACTS, 'extension.log'), extensionLogs(cs.userData));
  }
});

/** The access-map page inside the webview's iframes (the frame where the page's `window.__viewer` hook lives). */
async function viewerFrame(timeout = 60000) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    for (const f of page.frames()) {
      const ok = await f
        .evaluate(() => typeof window.__viewer === 'object' && window.__viewer !== null)
        .catch(() => false);
      if (ok) return f;
    }
    await page.waitForTimeout(250);
  }
  throw new Error('no webview frame with window.__viewer');
}

async function waitViewer(frame, pred, what, timeout = 60000) {
  await frame.waitForFunction(pred, undefined, { timeout, polling: 100 }).catch(async (e) => {
    const st = await frame
      .evaluate(() => ({
        idle: window.__viewer.idle,
        state: window.__viewer.state(),
        msg: document.getElementById('tl-message')?.textContent,
      }))
      .catch(() => null);
    throw new Error(`${what}: ${e.message}\nviewer: ${JSON.stringify(st)}`);
  });
}

// oob_missing_mask.py (shared corpus): line 12 `x = tl.load(x_ptr + offs)` reads 24 elements past the end of x
// in program 7; line 13 loads y_ptr with a mask; line 14 stores out_ptr.
const OOB_FILE = 'oob_missing_mask.py';

/** it(), plus a screenshot of the moment a step fails. */
function step(name, fn) {
  it(name, async () => {
    try {
      await fn();
    } catch (e) {
      await wb?.shot(`FAILED-${name.replace(/[^\w]+/g, '-').slice(0, 50)}`).catch(() => {});
      throw e;
    }
  });
}

describe('Triton Lens in VS Code', () => {
  step('shows inlay hints with what each load/store touched', async () => {
    await wb.openFile(OOB_FILE);
    await wb.statusItem('Triton Lens: done').waitFor({ timeout: 180000 });
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.editor-group-container.active .view-lines .view-line')].some((l) =>
          /x_ptr\[0:1000\]/.test(l.textContent),
        ),
      undefined,
      { timeout: 60000 },
    );
    const l12 = await wb.lineText(12);
    const l13 = await wb.lineText(13);
    await wb.shot('inlay-hints');
    assert.match(l12, /x = tl\.load\(x_ptr \+ offs\).*24 OOB · x_ptr\[0:1000\].*8 prog/, l12);
    assert.match(l13, /y_ptr\[0:1000\].*1000\/1024 active/, l13);
  });

  step('reports the out-of-bounds load in the Problems view', async () => {
    await page.keyboard.press('Control+Shift+M');
    const row = page
      .locator('.markers-panel .monaco-list-row', { hasText: "would read past the end of x_ptr's tensor" })
      .first();
    await row.waitFor({ timeout: 30000 });
    const text = norm(await row.innerText());
    await wb.shot('problems-oob');
    assert.match(text, /24 lanes of program \(7,\)/, text);
    assert.match(text, /\[Ln 12, Col 9\]|12:9|Ln 12/, text);
    await page.keyboard.press('Control+Shift+M'); // toggle the panel away again
    await page.keyboard.press('Escape');
  });

  step('shows the touched elements in the hover of a load', async () => {
    const pt = await wb.pointAt('x = tl.load(x_ptr + offs)', 'tl.load');
    assert.ok(pt, 'line 12 is on screen');
    await page.mouse.move(pt.x - 20, pt.y);
    await page.mouse.move(pt.x, pt.y, { steps: 4 });
    const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'touched' }).first();
    await hover.waitFor({ timeout: 30000 });
    const text = norm(await hover.innerText());
    await wb.shot('hover-touched');
    assert.match(text, /touched, all programs: x_ptr\[0:1000\]/, text);
    assert.match(text, /1000 unique elements of 1000/, text);
    assert.match(text, /out of bounds: 24 active lanes/, text);
    assert.match(text, /sector efficiency: 100\.0%/, text); // issue 14: performance in the hover
    await page.mouse.move(5, 500);
    await page.keyboard.press('Escape');
  });

  let frame;
  step('opens the access map from the "Visualize this kernel" code lens', async () => {
    const lens = page
      .locator('.editor-group-container .codelens-decoration a', { hasText: 'Visualize this kernel' })
      .first();
    await lens.waitFor({ timeout: 30000 });
    await lens.click();
    await page
      .locator('.tabs-container .tab', { hasText: 'Access map: oob_missing_mask.py' })
      .waitFor({ timeout: 30000 });
    frame = await viewerFrame();
    await waitViewer(
      frame,
      () =>
        window.__viewer.idle &&
        window.__viewer.state().kernel === 'add_kernel' &&
        window.__viewer.state().tensors.length === 3,
      'the view shows add_kernel',
    );
    const st = await frame.evaluate(() => window.__viewer.state());
    await wb.shot('access-map-opened');
    assert.deepEqual(st.tensors, ['x_ptr', 'y_ptr', 'out_ptr']);
    // the out-of-bounds lanes of line 12 are drawn past the end of x
    const counts = await frame.evaluate(() => window.__viewer.counts('x_ptr'));
    assert.ok(counts, 'x_ptr has a map');
  });

  step('follows the cursor: moving to another load changes what the view highlights', async () => {
    // the cursor goes back to the editor (the code lens click left focus in the view)
    const start = await wb.pointAt('x = tl.load(x_ptr + offs)', 'x = tl');
    await page.mouse.click(start.x, start.y);
    await waitViewer(frame, () => window.__viewer.state().follow?.line === 12, 'following line 12');
    await waitViewer(frame, () => window.__viewer.idle, 'idle after line 12');
    const at12 = await frame.evaluate(() => ({
      x: window.__viewer.cellState('x_ptr', 5),
      y: window.__viewer.cellState('y_ptr', 5),
    }));
    await wb.shot('view-follows-line-12');
    await wb.gotoLine(13, 9);
    await waitViewer(frame, () => window.__viewer.state().follow?.line === 13, 'following line 13');
    await waitViewer(frame, () => window.__viewer.idle, 'idle after line 13');
    const at13 = await frame.evaluate(() => ({
      x: window.__viewer.cellState('x_ptr', 5),
      y: window.__viewer.cellState('y_ptr', 5),
    }));
    await wb.shot('view-follows-line-13');
    assert.equal(at12.x.followed, true, JSON.stringify(at12));
    assert.equal(at12.y.followed, false, JSON.stringify(at12));
    assert.equal(at13.x.followed, false, JSON.stringify(at13));
    assert.equal(at13.y.followed, true, JSON.stringify(at13));
    assert.notDeepEqual(at12.x.pixel, at13.x.pixel, 'x_ptr cell 5 is drawn differently once line 13 is followed');
  });

  step("shows Values with a histogram, a program's memory operations and Performance (issue 14)", async () => {
    // the histogram is of the followed line's elements: follow x_ptr's load (the step before left line 13)
    await wb.gotoLine(12, 9);
    await waitViewer(frame, () => window.__viewer.state().follow?.line === 12, 'following line 12');
    await frame.selectOption('#tl-values', 'after');
    await waitViewer(
      frame,
      () => {
        const v = window.__viewer.values('x_ptr');
        return v && v.histogram !== null && window.__viewer.idle;
      },
      'values of x_ptr',
    );
    const v = await frame.evaluate(() => window.__viewer.values('x_ptr'));
    assert.equal(v.block, 1);
    assert.equal(v.histogram.line, 12);
    assert.equal(v.histogram.elements, 1000);
    await frame.click('.tl-prog[data-pid="7"]');
    await waitViewer(
      frame,
      () => window.__viewer.idle && document.querySelectorAll('#tl-ops-panel .tl-op').length === 3,
      'program 7 operations',
    );
    const ops = await frame.$$eval('#tl-ops-panel .tl-op', (els) =>
      els.map((e) => e.children[1].textContent + ' ' + e.children[2].textContent),
    );
    assert.deepEqual(ops, ['12 x_ptr', '13 y_ptr', '14 out_ptr']);
    const roof = await frame.$eval('#tl-roofline', (e) => e.firstChild.textContent);
    assert.match(roof, /^roofline estimate on H100 SXM: ≥ [\d.]+ ns — memory-bound$/);
    await wb.shot('values-ops-performance');
    await frame.selectOption('#tl-values', 'off');
    await frame.click('.tl-prog-all');
  });

  step('reveals the source line when a cell is clicked', async () => {
    await page.keyboard.press('Control+Home'); // cursor away, to line 1
    const pt = await frame.evaluate(() => window.__viewer.cellPoint('y_ptr', 10));
    assert.ok(pt, 'y_ptr cell 10 is on screen');
    // frame coordinates -> page coordinates: offset of the iframe element
    const el = await frame.frameElement();
    const fb = await el.boundingBox();
    await page.mouse.click(fb.x + pt.x, fb.y + pt.y);
    await page
      .waitForFunction(
        () =>
          /Ln 13,/.test(
            document.querySelector('.statusbar-item[id*="selection"], .editor-status-selection')?.textContent ?? '',
          ),
        undefined,
        { timeout: 15000 },
      )
      .catch(() => {});
    const pos = norm(
      await page
        .locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ })
        .first()
        .innerText(),
    );
    await wb.shot('cell-click-reveals-line');
    assert.match(pos, /Ln 13,/, `the cursor is on line 13 after clicking a y_ptr cell: ${pos}`);
  });

  step('comes back after a window reload (webview serializer), on the same kernel', async () => {
    // Reload the way a user does (Developer: Reload Window): the workbench shuts down properly and
    // stores its editor layout first; a bare page reload races that store and sometimes loses it.
    await Promise.all([page.waitForEvent('load', { timeout: 90000 }), wb.command('Developer: Reload Window')]);
    await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    await page
      .locator('.tabs-container .tab', { hasText: 'Access map: oob_missing_mask.py' })
      .waitFor({ timeout: 60000 });
    // a restored webview is only loaded once it is visible
    await page.locator('.tabs-container .tab', { hasText: 'Access map: oob_missing_mask.py' }).click();
    frame = await viewerFrame(90000);
    await waitViewer(
      frame,
      () =>
        window.__viewer.idle &&
        window.__viewer.state().kernel === 'add_kernel' &&
        window.__viewer.state().tensors.length === 3,
      'the restored view shows add_kernel',
      120000,
    );
    await wb.shot('access-map-restored-after-reload');
  });

  step('debugs a kernel: stops at a breakpoint inside the @triton.jit body, in the chosen program', async () => {
    await wb.openFile('vector_add.py');
    await wb.gotoLine(10); // offsets = tl.arange(0, B) + pid * B
    await page.keyboard.press('F9');
    await page.locator('.editor-group-container.active .codicon-debug-breakpoint').first().waitFor({ timeout: 15000 });
    await wb.command('Triton Lens: Debug Kernel at Cursor');
    const box = page.locator('.quick-input-widget input');
    await box.waitFor({ state: 'visible' });
    await box.fill('1');
    await wb.shot('debug-ask-program');
    await page.keyboard.press('Enter');
    // paused on line 10 of the kernel, in program 1
    await page.locator('.debug-top-stack-frame-line').first().waitFor({ timeout: 120000 });
    await page
      .locator('.debug-call-stack .monaco-list-row', { hasText: 'add_kernel' })
      .first()
      .waitFor({ timeout: 30000 });
    const locals = page.locator('.debug-variables .monaco-list-row', { hasText: 'Locals' }).first();
    await locals.waitFor({ timeout: 30000 });
    if ((await locals.getAttribute('aria-expanded')) !== 'true') await locals.click();
    const pid = page.locator('.debug-variables .monaco-list-row', { hasText: /^\s*pid\b/ }).first();
    await pid.waitFor({ timeout: 30000 });
    await wb.shot('debug-stopped-in-kernel');
    const text = norm(await pid.innerText());
    assert.match(text, /^\s*pid\b.*\b1\b/s, `pid should be 1, the program asked for: ${text}`);
    await page.keyboard.press('Shift+F5');
  });

  // cuda_script_without_gpu.py (corpus): its __main__ makes its tensors with device="cuda"; this machine has no
  // GPU, so CPU tensors stand in for them and the editor says so. Line 14 is `x = tl.load(x_ptr + offs, mask=m)`.
  step('shows the hints of a kernel file written for CUDA, and says CPU tensors stood in', async () => {
    await wb.openFile('cuda_script_without_gpu.py');
    await wb.statusItem('CPU stand-in for CUDA').waitFor({ timeout: 180000 });
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.editor-group-container.active .view-lines .view-line')].some((l) =>
          /x_ptr\[0:1000\]/.test(l.textContent),
        ),
      undefined,
      { timeout: 60000 },
    );
    const l14 = await wb.lineText(14);
    const lens = page
      .locator('.editor-group-container.active .codelens-decoration', { hasText: 'CPU stand-in for CUDA' })
      .first();
    await lens.waitFor({ timeout: 30000 });
    await wb.shot('cuda-stand-in');
    assert.match(l14, /x = tl\.load\(x_ptr \+ offs, mask=m\).*x_ptr\[0:1000\].*8 prog.*1000\/1024 active/, l14);
    assert.doesNotMatch(norm(await lens.innerText()), /raised/);
  });
});

describe('Triton Lens when it must not or cannot run', () => {
  let cs2, page2, wb2;
  let instances = 0;
  const ws2 = path.join(WORK, 'workspace2');
  async function start(name, opts) {
    fs.rmSync(ws2, { recursive: true, force: true });
    fs.mkdirSync(ws2, { recursive: true });
    fs.copyFileSync(path.join(CORPUS, 'vector_add.py'), path.join(ws2, 'vector_add.py'));
    cs2 = await startCodeServer({ env, dir: path.join(WORK, name), vsix: VSIX, ...opts });
    page2 = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    wb2 = new Workbench(page2, ARTIFACTS);
    wb2.shots = wb.shots + 10 * ++instances;
    await wb2.open(cs2.url, ws2);
  }
  after(async () => {
    await page2?.close().catch(() => {});
    await cs2?.stop();
  });

  it('runs nothing in Restricted Mode and says why in the status bar', async () => {
    await start('code-server-untrusted', { trustAll: false, machineSettings: { 'tritonLens.python': PYTHON } });
    try {
      await page2.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 60000 });
      await wb2.openFile('vector_add.py');
      const item = wb2.statusItem('Triton Lens: restricted');
      await item.waitFor({ timeout: 60000 });
      await item.hover();
      const tip = page2
        .locator('.monaco-hover, .hover-contents, .workbench-hover', { hasText: 'runs nothing in Restricted Mode' })
        .first();
      await tip.waitFor({ timeout: 15000 });
      await page2.waitForTimeout(4000); // time enough for a run, had one started
      const line = await wb2.lineText(12);
      await wb2.shot('restricted-mode');
      assert.doesNotMatch(line, /x_ptr\[/, `no inlay hints in Restricted Mode: ${line}`);
      assert.equal(await page2.locator('.codelens-decoration', { hasText: 'Visualize' }).count(), 0);
    } finally {
      await page2.close();
      await cs2.stop();
    }
  });

  it('says which package is missing from the interpreter, and how to install it', async () => {
    // the venv's python without its site-packages: no triton, torch or numpy
    const bare = path.join(WORK, 'bare-python');
    fs.writeFileSync(bare, `#!/bin/sh\nexec "${PYTHON}" -S "$@"\n`, { mode: 0o755 });
    await start('code-server-bare', { machineSettings: { 'tritonLens.python': bare } });
    await wb2.openFile('vector_add.py');
    const toast = page2.locator('.notification-toast', { hasText: 'Triton Lens needs' }).first();
    await toast.waitFor({ timeout: 60000 });
    const text = norm(await toast.innerText());
    await wb2.shot('missing-packages');
    assert.ok(
      text.includes(
        `Triton Lens needs triton, torch, numpy in ${bare}: run \`${bare} -m pip install triton torch numpy\``,
      ),
      text,
    );
    assert.match(text, /Open Settings/);
    await wb2.statusItem('Triton Lens: setup needed').waitFor({ timeout: 10000 });
  });
});
