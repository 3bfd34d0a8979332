// End-to-end: the built .vsix installed in a real VS Code (code-server), driven through headless Chromium the
// way a kernel author uses it, on the shared kernel corpus. Screenshots of every step: tests/e2e/artifacts/.
//   node --test tests/e2e/vscode.test.mjs        (after `make vsix` and tests/e2e/setup.sh; `make test-e2e`)
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO, startCodeServer } from './lib/codeServer.mjs';
import { e2eSession, PYTHON, VSIX, viewerFrame, waitViewer } from './lib/session.mjs';
import { norm, Workbench } from './lib/workbench.mjs';

const CORPUS = path.join(REPO, 'tests', 'corpus');
const WORK = path.join(REPO, '.e2e');
const ARTIFACTS = path.join(REPO, 'tests', 'e2e', 'artifacts');

// issue 14's corpus: tl.dot tiles and iterations, Values and the histogram, 4-D slices
const ISSUE14_FILES = ['matmul.py', 'layernorm.py', 'attention_4d.py'];
const SOFTMAX_BIG = 'softmax_1823x781.py'; // tutorial-sized: a run long enough for partial results first
const LAYERNORM_BIG = 'layernorm_1151x8192.py'; // tutorial-sized: 9.4M-element tensors, over the 1M value limit

// this file's screenshots go; notebook.test.mjs's (artifacts/notebook) stay, whichever file ran first
const session = e2eSession({
  work: WORK,
  artifacts: ARTIFACTS,
  files: [
    ...[
      'vector_add.py',
      'oob_missing_mask.py',
      'softmax.py',
      'cuda_script_without_gpu.py',
      'multi_launch.py',
      ...ISSUE14_FILES,
    ].map((f) => [path.join(CORPUS, f), f]),
    ...[SOFTMAX_BIG, LAYERNORM_BIG].map((f) => [path.join(REPO, 'bench', 'kernels', f), f]),
  ],
  // VS Code's default editor.inlayHints.maximumLength (43): the server's hints fit it
  settings: {
    'debug.openDebug': 'openOnDebugBreak',
    'debug.internalConsoleOptions': 'neverOpen',
    'workbench.colorTheme': 'Default Dark Modern',
  },
  clearArtifacts: (e) => e !== 'notebook',
});
let env, browser, page, wb;
const step = session.step;

before(async () => {
  assert.ok(fs.existsSync(CORPUS), `the kernel corpus is expected at ${CORPUS}`);
  await session.start();
  ({ env, browser, page, wb } = session);
});
after(() => session.stop());

// oob_missing_mask.py (shared corpus): line 12 `x = tl.load(x_ptr + offs)` reads 24 elements past the end of x
// in program 7; line 13 loads y_ptr with a mask; line 14 stores out_ptr.
const OOB_FILE = 'oob_missing_mask.py';

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
    // No stale lens: once the status bar says done, the kernel's lens drops "running…" (VS Code asks for
    // lenses again after the server's refresh, debounced by a few hundred ms).
    await page.waitForFunction(
      () => {
        const lenses = [...document.querySelectorAll('.editor-group-container.active .codelens-decoration')];
        return lenses.some((l) => /launch/.test(l.textContent)) && !lenses.some((l) => /running…/.test(l.textContent));
      },
      undefined,
      { timeout: 10000 },
    );
    const l12 = await wb.lineText(12);
    const l13 = await wb.lineText(13);
    await wb.shot('inlay-hints');
    // every lane on (no mask): the mask part is left out, so programs and bytes fit too
    assert.match(l12, /x = tl\.load\(x_ptr \+ offs\).*24 OOB · x_ptr\[0:1000\] · 8 prog · 3\.9 KB/, l12);
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
    frame = await viewerFrame(page);
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
    // the first screen of the panel (1600x1000 window) shows the followed tensor whole, its out-of-bounds
    // band and the warning under it, without scrolling
    const fold = await frame.evaluate(() => {
      const card = document.querySelector('[data-tensor="0"]');
      const warn = card?.querySelector('.tl-oob');
      const map = card?.querySelector('canvas');
      return {
        height: window.innerHeight,
        scrolled: document.scrollingElement.scrollTop,
        map: map?.getBoundingClientRect().bottom,
        warn: warn?.getBoundingClientRect().bottom,
        text: warn?.textContent,
      };
    });
    assert.match(fold.text, /out of bounds — line 12: 24 out-of-bounds addresses/, JSON.stringify(fold));
    assert.ok(fold.scrolled === 0 && fold.map < fold.height && fold.warn < fold.height, JSON.stringify(fold));
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
    frame = await viewerFrame(page, { timeout: 90000 });
    await waitViewer(
      frame,
      () =>
        window.__viewer.idle &&
        window.__viewer.state().kernel === 'add_kernel' &&
        window.__viewer.state().tensors.length === 3,
      'the restored view shows add_kernel',
      { timeout: 120000 },
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
    assert.match(l14, /x = tl\.load\(x_ptr \+ offs, mask=m\).*x_ptr\[0:1000\] · 1000\/1024 active · 8 prog/, l14);
    assert.doesNotMatch(norm(await lens.innerText()), /raised/);
  });

  step('after an edit, shows partial hints of a sample of programs at once, then the complete ones', async () => {
    await wb.openFile(SOFTMAX_BIG);
    // the first run's complete results (not its partial ones)
    await page.waitForFunction(
      () => {
        const lenses = [...document.querySelectorAll('.editor-group-container.active .codelens-decoration')];
        const text = lenses.map((l) => l.textContent).join(' | ');
        return /1 launch · 1823 programs/.test(text) && !/partial|running/.test(text);
      },
      undefined,
      { timeout: 180000 },
    );
    // an edit that changes nothing the kernel does: a space at the end of the docstring line
    await wb.gotoLine(1, 200);
    await page.keyboard.type(' ');
    // the partial results come first (the lens says of how many programs), caught as they are drawn: the
    // lens and the load's hint read in the same frame
    const partial = await (
      await page.waitForFunction(
        () => {
          const ed = '.editor-group-container.active';
          const lens = [...document.querySelectorAll(`${ed} .codelens-decoration`)]
            .map((l) => l.textContent)
            .join(' | ');
          if (!/partial results: \d+ of 1823 programs/.test(lens)) return null;
          const load = [...document.querySelectorAll(`${ed} .view-lines .view-line`)]
            .map((l) => l.textContent.replace(/\u00a0/g, ' '))
            .find((t) => t.includes('row = tl.load('));
          // (VS Code asks for the hints again after the lens: both of the sample, once both are drawn)
          return load && / of 0:1823, 0:781\]/.test(load) ? { lens, load } : null;
        },
        undefined,
        { timeout: 60000, polling: 'raf' },
      )
    ).jsonValue();
    await wb.shot('partial-results');
    // then the complete ones replace them, the lens and the hint
    const done = await (
      await page.waitForFunction(
        () => {
          const ed = '.editor-group-container.active';
          const lens = [...document.querySelectorAll(`${ed} .codelens-decoration`)]
            .map((l) => l.textContent)
            .join(' | ');
          if (!/1823 programs/.test(lens) || /partial|running/.test(lens)) return null;
          const load = [...document.querySelectorAll(`${ed} .view-lines .view-line`)]
            .map((l) => l.textContent.replace(/\u00a0/g, ' '))
            .find((t) => t.includes('row = tl.load('));
          return load && /input_ptr\[0:1823, 0:781\]/.test(load) ? { lens, load } : null;
        },
        undefined,
        { timeout: 120000 },
      )
    ).jsonValue();
    const m = /partial results: (\d+) of 1823 programs/.exec(partial.lens);
    assert.ok(m && Number(m[1]) < 1823, JSON.stringify(partial));
    // the load line has its hint already, of the sample's rows ("input_ptr[39 of 0:1823, 0:781]"); then of all
    const sample = /input_ptr\[(\d+) of 0:1823, 0:781\]/.exec(partial.load);
    assert.ok(sample && Number(sample[1]) < 1823 && Number(sample[1]) === Number(m[1]), JSON.stringify(partial));
    assert.match(done.lens, /1 launch · 1823 programs/, JSON.stringify(done));
    await page.keyboard.press('Backspace'); // the file as it was
  });

  // ---- issue 14 on the corpus: every feature of the viewer, each screenshot in the dark and the light theme

  /** The viewer frame showing `kernel` (the one panel reloads its page for another file), once idle. */
  const viewerFor = (kernel, timeout = 120000) => viewerFrame(page, { kernel, timeout });

  /** Opens a corpus file in the first editor group, waits for its hints, and opens its access map. */
  async function visualize(file, hint, kernel) {
    // focus out of the webview (keys pressed there may not reach the workbench): the first group's active tab
    await page.locator('.editor-group-container').first().locator('.tabs-container .tab.active').first().click();
    await page.keyboard.press('Control+1');
    await wb.openFile(file);
    await page.waitForFunction(
      (re) =>
        [...document.querySelectorAll('.editor-group-container.active .view-lines .view-line')].some((l) =>
          new RegExp(re).test(l.textContent),
        ),
      hint.source,
      { timeout: 180000 },
    );
    const lens = page
      .locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Visualize this kernel' })
      .first();
    await lens.waitFor({ timeout: 30000 });
    await lens.click();
    await page.locator('.tabs-container .tab', { hasText: `Access map: ${file}` }).waitFor({ timeout: 30000 });
    return viewerFor(kernel);
  }

  /** The cursor to `line` of the editor (clicking into it first: a code lens click leaves focus in the view). */
  async function cursorTo(f, lineText, line) {
    const pt = await wb.pointAt(lineText, lineText.slice(0, 6));
    assert.ok(pt, `${lineText} is on screen`);
    await page.mouse.click(pt.x, pt.y);
    await wb.gotoLine(line, 9);
    await waitViewer(f, () => window.__viewer.idle, 'idle');
    await f.waitForFunction((l) => window.__viewer.state().follow?.line === l && window.__viewer.idle, line, {
      timeout: 60000,
      polling: 100,
    });
  }

  /** Picks a colour theme (its label in the picker) from the command palette; waits until the webview page has the theme's body class. */
  async function colorTheme(f, theme, bodyClass) {
    const before = await f.evaluate(() => window.__viewer.renderCount);
    await wb.command('Preferences: Color Theme');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(theme);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: theme }).first().waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15000 });
    await f.waitForFunction(
      ([c, n]) => document.body.classList.contains(c) && window.__viewer.renderCount > n && window.__viewer.idle,
      [bodyClass, before],
      { timeout: 30000, polling: 100 },
    );
  }

  /** Screenshots (of `show` scrolled into view) in the dark theme, then the light one (the page redrawn in the
   * light colours), back to dark. */
  async function shotBothThemes(f, name, show) {
    if (show) await f.$eval(show, (e) => e.scrollIntoView({ block: 'center' }));
    const look = () =>
      f.evaluate(() => ({
        body: document.body.className,
        bg: getComputedStyle(document.body).backgroundColor,
        canvas: Array.from(document.querySelectorAll('canvas'), (c) => c.toDataURL()).join(),
      }));
    const dark = await look();
    assert.match(dark.body, /\bvscode-dark\b/);
    await wb.shot(`${name}-dark`);
    await colorTheme(f, 'Light Modern', 'vscode-light');
    const light = await look();
    await wb.shot(`${name}-light`);
    assert.notEqual(light.bg, dark.bg, 'the page background follows the theme');
    assert.notEqual(light.canvas, dark.canvas, 'the canvases are redrawn in the light theme colours');
    await colorTheme(f, 'Dark Modern', 'vscode-dark');
  }

  const frameBox = async (f) => (await f.frameElement()).boundingBox();

  let mm;
  step('matmul.py: the Iteration slider steps through the K loop and the tl.dot A/B tiles follow it', async () => {
    mm = await visualize('matmul.py', /a_ptr\[/, 'matmul_kernel');
    await cursorTo(mm, 'a = tl.load(a_ptr', 20);
    const st = await mm.evaluate(() => window.__viewer.state());
    assert.deepEqual(st.tensors, ['a_ptr', 'b_ptr', 'c_ptr']);
    assert.equal(st.iterations, 3); // K = 72 in blocks of 32
    assert.equal(st.iteration, null);
    assert.equal(await mm.$eval('.tl-iteration', (e) => e.hidden), false);
    assert.equal(await mm.$eval('#tl-iteration-label', (e) => e.textContent), 'all 3 iterations');
    const cells = () =>
      mm.evaluate(() => ({
        k10: window.__viewer.cellState('a_ptr', [0, 10]),
        k40: window.__viewer.cellState('a_ptr', [0, 40]),
        k70: window.__viewer.cellState('a_ptr', [0, 70]),
      }));
    const all = await cells();
    assert.deepEqual([all.k10.followed, all.k40.followed, all.k70.followed], [true, true, true]);
    // the slider, by keyboard as a user steps it: all -> iteration 0 -> iteration 1
    await mm.focus('#tl-iteration');
    await page.keyboard.press('ArrowRight');
    await waitViewer(mm, () => window.__viewer.state().iteration === 0 && window.__viewer.idle, 'iteration 0');
    await page.keyboard.press('ArrowRight');
    await waitViewer(mm, () => window.__viewer.state().iteration === 1 && window.__viewer.idle, 'iteration 1');
    assert.equal(await mm.$eval('#tl-iteration', (e) => e.value), '1');
    assert.equal(await mm.$eval('#tl-iteration-label', (e) => e.textContent), 'iteration 1 of 3');
    const it1 = await cells();
    // iteration 1 reads columns 32:64 of a only; the cells of the other iterations are drawn untouched
    assert.deepEqual([it1.k10.drawn, it1.k40.followed, it1.k70.drawn], ['untouched', true, 'untouched']);
    assert.notDeepEqual(it1.k10.pixel, all.k10.pixel, 'a_ptr[0, 10] is drawn differently at iteration 1');
    assert.deepEqual(it1.k40.pixel, all.k40.pixel);
    // tl.dot of program (0, 0): its A and B tiles at iteration 1, then at iteration 2
    await mm.click('.tl-prog[data-pid="0"]');
    await waitViewer(mm, () => window.__viewer.idle && !document.getElementById('tl-dots').hidden, 'tl.dot panel');
    const tiles = () => mm.$$eval('.tl-tile-link', (els) => els.map((e) => e.textContent));
    assert.match(await mm.$eval('#tl-dots', (e) => e.innerText), /iteration 1 of 3 — 32×32 @ 32×32 \(65536 FLOPs\)/);
    assert.deepEqual(await tiles(), ['a_ptr[0:32, 32:64] — line 20', 'b_ptr[32:64, 0:32] — line 23']);
    await mm.focus('#tl-iteration');
    await page.keyboard.press('ArrowRight');
    await waitViewer(mm, () => window.__viewer.state().iteration === 2 && window.__viewer.idle, 'iteration 2');
    assert.deepEqual(await tiles(), ['a_ptr[0:32, 64:72] — line 20', 'b_ptr[64:72, 0:32] — line 23']);
    // the tiles are drawn with their values, through the extension's tritonLens/dotTiles: A's columns
    // past K = 72 are its masked-off zeros (one colour), C = acc + A @ B has many
    const drawn = () =>
      mm.$$eval('#tl-dots canvas.tl-tile-values', (cs) =>
        cs.map((c) => {
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const at = (x, y) => d.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3).join(',');
          const all = new Set();
          for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) all.add(at(x, y));
          return { size: [c.width, c.height], colours: all.size, tail: new Set([8, 31].map((x) => at(x, 3))).size };
        }),
      );
    await waitViewer(mm, () => document.querySelectorAll('#tl-dots canvas.tl-tile-values').length === 3, 'tile values');
    const values = await drawn();
    assert.deepEqual(
      values.map((v) => v.size),
      [
        [32, 32],
        [32, 32],
        [32, 32],
      ],
    );
    assert.equal(values[0].tail, 1, JSON.stringify(values));
    assert.ok(values[0].colours > 20 && values[2].colours > 100, JSON.stringify(values));
    const it2 = await cells();
    assert.deepEqual([it2.k40.drawn, it2.k70.followed], ['untouched', true]);
    assert.notDeepEqual(it2.k40.pixel, it1.k40.pixel, 'a_ptr[0, 40] is drawn differently at iteration 2');
    await shotBothThemes(mm, 'matmul-iteration-dot', '#tl-dots');
    // play steps through the iterations by itself; pause stops it
    await mm.click('.tl-prog-all');
    await mm.focus('#tl-iteration');
    await page.keyboard.press('Home');
    await waitViewer(mm, () => window.__viewer.state().iteration === null && window.__viewer.idle, 'all iterations');
    await mm.click('#tl-play');
    await waitViewer(mm, () => window.__viewer.state().iteration === 1, 'playing reaches iteration 1', {
      timeout: 10000,
    });
    await mm.click('#tl-play');
    const paused = await mm.evaluate(() => window.__viewer.state());
    assert.equal(paused.playing, false);
    assert.equal(await mm.$eval('#tl-play', (e) => e.textContent), 'play');
    await page.waitForTimeout(1000);
    assert.equal((await mm.evaluate(() => window.__viewer.state())).iteration, paused.iteration);
    await mm.focus('#tl-iteration');
    await page.keyboard.press('Home');
    await waitViewer(mm, () => window.__viewer.state().iteration === null && window.__viewer.idle, 'all iterations');
  });

  step('matmul.py: a program picked per grid axis, its memory operations in order, and Performance', async () => {
    await mm.click('.tl-prog-all');
    await waitViewer(mm, () => window.__viewer.idle && window.__viewer.state().programs === null, 'all programs');
    assert.equal(await mm.$$eval('#tl-pid input', (e) => e.length), 2); // a 2 x 2 grid: one field per axis
    await mm.fill('#tl-pid input[data-axis="0"]', '1');
    await mm.press('#tl-pid input[data-axis="0"]', 'Enter');
    await waitViewer(mm, () => window.__viewer.idle && window.__viewer.state().programs?.length === 2, 'x = 1');
    assert.deepEqual((await mm.evaluate(() => window.__viewer.state())).programs, [1, 3]); // x = 1, any y
    await mm.fill('#tl-pid input[data-axis="1"]', '1');
    await mm.press('#tl-pid input[data-axis="1"]', 'Enter');
    await waitViewer(mm, () => window.__viewer.idle && window.__viewer.state().programs?.length === 1, '(1, 1)');
    assert.deepEqual((await mm.evaluate(() => window.__viewer.state())).programs, [3]);
    assert.equal(
      await mm.$eval('#tl-ops-panel h2', (e) => e.textContent),
      'Memory operations of program (1,1), in order',
    );
    const rows = await mm.$$eval('#tl-ops-panel .tl-op', (els) =>
      els.map((e) => Array.from(e.children).map((c) => c.textContent)),
    );
    assert.deepEqual(
      rows.map((r) => `${r[1]} ${r[2]} ${r[4]}`),
      // rows 32:48 of a: 16 of the block's 32 rows, and only 8 of 32 k in the last iteration
      [
        '20 a_ptr 512/1024',
        '23 b_ptr 256/1024',
        '20 a_ptr 512/1024',
        '23 b_ptr 256/1024',
        '20 a_ptr 128/1024',
        '23 b_ptr 64/1024',
        '27 c_ptr 128/1024',
      ],
    );
    // clicking an operation follows its line at its iteration
    await mm.click('#tl-ops-panel .tl-op:nth-of-type(5)');
    await waitViewer(
      mm,
      () =>
        window.__viewer.idle && window.__viewer.state().follow?.line === 23 && window.__viewer.state().iteration === 1,
      'line 23 at iteration 1',
    );
    assert.equal((await mm.evaluate(() => window.__viewer.cellState('b_ptr', [40, 35]))).followed, true);
    assert.equal((await mm.evaluate(() => window.__viewer.cellState('b_ptr', [3, 35]))).drawn, 'untouched');
    // Performance: per line sizes, mask and sector efficiency, reuse; the GPU picker changes the estimate
    const perf = await mm.$$eval('#tl-perf .tl-perf tr', (els) =>
      els.slice(1).map((e) => Array.from(e.children).map((c) => c.textContent)),
    );
    assert.deepEqual(perf[0], ['20', 'a_ptr', 'load', '27.0 KB', '56.3%', '100.0%', '2.00×']);
    assert.equal(perf[3][1], 'tl.dot');
    const h100 = await mm.$eval('#tl-roofline', (e) => e.firstChild.textContent);
    assert.match(h100, /^roofline estimate on H100 SXM: ≥ [\d.]+ ns — memory-bound$/);
    await mm.selectOption('#tl-gpu', 'rtx4090');
    await waitViewer(mm, () => window.__viewer.idle && window.__viewer.state().gpu === 'rtx4090', 'RTX 4090');
    const rtx = await mm.$eval('#tl-roofline', (e) => e.firstChild.textContent);
    assert.match(rtx, /^roofline estimate on RTX 4090: ≥ [\d.]+ ns — memory-bound$/);
    assert.ok(parseFloat(rtx.split('≥ ')[1]) > parseFloat(h100.split('≥ ')[1]), `${rtx} vs ${h100}`);
    await shotBothThemes(mm, 'matmul-programs-operations', '#tl-ops-panel');
    await shotBothThemes(mm, 'matmul-performance', '#tl-perf');
    await mm.selectOption('#tl-gpu', 'h100');
    await mm.click('.tl-prog-all');
    await mm.focus('#tl-iteration');
    await page.keyboard.press('Home');
    await waitViewer(mm, () => window.__viewer.state().iteration === null && window.__viewer.idle, 'all iterations');
  });

  step('layernorm.py: Values colour the cells by value, with the histogram of the followed line', async () => {
    const ln = await visualize('layernorm.py', /y_ptr\[/, 'layernorm_kernel');
    await cursorTo(ln, 'tl.store(y_ptr', 30);
    const accesses = await ln.evaluate(() => window.__viewer.cellState('y_ptr', 7).pixel);
    await ln.selectOption('#tl-values', 'after');
    await waitViewer(
      ln,
      () => window.__viewer.idle && window.__viewer.values('y_ptr')?.histogram,
      'values and histogram of y_ptr',
    );
    const v = await ln.evaluate(() => window.__viewer.values('y_ptr'));
    // y = layernorm(x) * w + b: 16 rows of 200, every element stored by line 30
    assert.deepEqual([v.block, v.cells, v.histogram.line, v.histogram.elements], [1, 3200, 30, 3200]);
    assert.equal(
      v.histogram.counts.reduce((a, b) => a + b, 0),
      3200,
    );
    assert.ok(v.lo < 0 && v.hi > 0, `${v.lo} .. ${v.hi}`);
    assert.match(
      await ln.$eval('[data-tensor="1"] .tl-histogram-title', (e) => e.textContent),
      /^histogram of the 3,200 elements line 30 touched \(all programs\)/,
    );
    // the histogram is drawn: bars on its canvas
    const bars = await ln.$eval('[data-tensor="1"] canvas.tl-histogram', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    assert.ok(bars > 100, `${bars} painted pixels in the histogram`);
    // the cells are in value colours: many colours, the brightest cell holds a larger value than the darkest
    const sample = await ln.evaluate(() => {
      const lum = (p) => 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
      const out = [];
      for (let i = 0; i < 3200; i += 23) out.push({ i, lum: lum(window.__viewer.cellState('y_ptr', i).pixel) });
      return out;
    });
    assert.ok(new Set(sample.map((s) => Math.round(s.lum))).size > 20, 'the cells have many colours');
    const hi = sample.reduce((a, b) => (b.lum > a.lum ? b : a));
    const lo = sample.reduce((a, b) => (b.lum < a.lum ? b : a));
    assert.notDeepEqual(await ln.evaluate(() => window.__viewer.cellState('y_ptr', 7).pixel), accesses);
    const box = await frameBox(ln);
    const valueAt = async (i) => {
      const pt = await ln.evaluate((j) => window.__viewer.cellPoint('y_ptr', j), i);
      await page.mouse.move(box.x + pt.x, box.y + pt.y);
      // y is [16, 200]: the tooltip of this very cell, its value loaded
      await ln.waitForFunction(
        (title) =>
          document.querySelector('.tl-tip-title')?.textContent === title &&
          /^value: -?[\d.]/.test(document.querySelector('.tl-tip-value')?.textContent || ''),
        `y_ptr[${Math.floor(i / 200)}, ${i % 200}]`,
        { timeout: 15000 },
      );
      const t = await ln.$eval('.tl-tip-value', (e) => e.textContent);
      return Number(t.slice('value: '.length));
    };
    const vHi = await valueAt(hi.i);
    const vLo = await valueAt(lo.i);
    assert.ok(vHi > vLo, `value ${vHi} (brightest cell ${hi.i}) > ${vLo} (darkest cell ${lo.i})`);
    await page.mouse.move(5, 500);
    await shotBothThemes(ln, 'layernorm-values-histogram', '[data-tensor="1"] canvas.tl-histogram');
    // before the launch: x is an input, its colours and histogram are those of the input values
    await ln.selectOption('#tl-values', 'before');
    await waitViewer(
      ln,
      () => window.__viewer.idle && window.__viewer.values('x_ptr')?.lo !== undefined,
      'values before',
    );
    assert.match(await ln.$eval('[data-tensor="0"] .tl-values-box', (e) => e.textContent), /values before the launch/);
    await ln.selectOption('#tl-values', 'off');
    await waitViewer(ln, () => window.__viewer.idle && window.__viewer.state().values === 'off', 'values off');
  });

  step(
    'layernorm_1151x8192.py: values and a histogram for a tensor of 9.4M elements, sampled and said so',
    async () => {
      const ln = await visualize(LAYERNORM_BIG, /Y\[/, '_layer_norm_fwd_fused');
      await cursorTo(ln, 'tl.store(Y + cols', 38);
      await ln.selectOption('#tl-values', 'after');
      await waitViewer(
        ln,
        // of the complete run (a sample's partial results come first): every element of Y touched
        () => window.__viewer.idle && window.__viewer.values('Y')?.histogram?.touched === 1151 * 8192,
        'values and histogram of Y, complete',
        { timeout: 120000 },
      );
      const v = await ln.evaluate(() => window.__viewer.values('Y'));
      assert.equal(v.none, null, 'values are shown, not "not available"');
      assert.ok(v.rowsStep > 1 || v.colsStep > 1, `downsampled: ${v.rowsStep} x ${v.colsStep}`);
      assert.match(v.note, /of 9,428,992 elements kept/);
      assert.equal(v.histogram.line, 38);
      assert.equal(v.histogram.touched, 1151 * 8192);
      assert.ok(v.lo < 0 && v.hi > 0, `a layer norm's outputs straddle 0: ${v.lo} .. ${v.hi}`);
      const bars = await ln.$eval('[data-tensor="1"] canvas.tl-histogram', (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n;
      });
      assert.ok(bars > 100, `${bars} painted pixels in the histogram`);
      // 8192 columns by 1151 rows: drawn wide, its aspect kept
      const box = await ln.$eval('[data-tensor="1"] canvas.tl-canvas', (e) => e.getBoundingClientRect());
      assert.ok(box.width > box.height * 3, `canvas ${box.width} x ${box.height}`);
      await wb.shot('layernorm-1151x8192-values');
      await ln.selectOption('#tl-values', 'off');
      await waitViewer(ln, () => window.__viewer.idle && window.__viewer.state().values === 'off', 'values off');
    },
  );

  step('multi_launch.py: the program selection is per kernel, and comes back with its kernel', async () => {
    const ml = await visualize('multi_launch.py', /x_ptr\[/, 'scale_kernel');
    const st = () => ml.evaluate(() => window.__viewer.state());
    const toKernel = async (name) => {
      const value = await ml.$eval(
        '#tl-kernel',
        (sel, n) => [...sel.options].find((o) => o.textContent.includes(n))?.value,
        name,
      );
      assert.ok(value !== undefined, `${name} is in the kernel picker`);
      await ml.selectOption('#tl-kernel', value);
      await ml.waitForFunction((n) => window.__viewer.state().kernel === n && window.__viewer.idle, name, {
        timeout: 30000,
      });
    };
    await ml.click('button[data-pid="0"]');
    await ml.waitForFunction(() => JSON.stringify(window.__viewer.state().programs) === '[0]', undefined, {
      timeout: 15000,
    });
    await toKernel('square_kernel');
    assert.equal((await st()).programs, null, "square_kernel starts with all its programs, not scale_kernel's pick");
    await ml.click('button[data-pid="1"]');
    await ml.waitForFunction(() => JSON.stringify(window.__viewer.state().programs) === '[1]', undefined, {
      timeout: 15000,
    });
    await toKernel('scale_kernel');
    assert.deepEqual((await st()).programs, [0], "scale_kernel's own pick comes back");
    await toKernel('square_kernel');
    assert.deepEqual((await st()).programs, [1]);
  });

  step('attention_4d.py: [B, H, S, D] tensors as grids of 2-D slices, the outer dimension picked', async () => {
    const at = await visualize('attention_4d.py', /q_ptr\[/, 'attention_kernel');
    const view = () =>
      at.evaluate(() => ({
        slices: window.__viewer.slices('q_ptr').map((s) => s.index),
        titles: Array.from(document.querySelectorAll('[data-tensor="0"] .tl-slice-title')).map((e) => e.textContent),
        images: Array.from(document.querySelectorAll('[data-tensor="0"] .tl-slice-card canvas')).map((c) =>
          c.toDataURL(),
        ),
      }));
    const b0 = await view();
    assert.deepEqual(b0.slices, [
      [0, 0],
      [0, 1],
      [0, 2],
      [0, 3],
    ]);
    assert.deepEqual(b0.titles, ['q_ptr[0, 0, :, :]', 'q_ptr[0, 1, :, :]', 'q_ptr[0, 2, :, :]', 'q_ptr[0, 3, :, :]']);
    assert.equal(b0.images.length, 4);
    // program 3 = (1, 1): b 0, h 1, rows 16:32; only its slice lights up
    await at.click('.tl-prog[data-pid="3"]');
    await waitViewer(at, () => window.__viewer.idle && window.__viewer.state().programs?.[0] === 3, 'program 3');
    const cs = (i) => at.evaluate((j) => window.__viewer.cellState('q_ptr', j), i);
    assert.equal((await cs([0, 1, 20, 3])).drawn, 'followed');
    assert.equal((await cs([0, 1, 3, 3])).drawn, 'untouched');
    assert.equal((await cs([0, 2, 20, 3])).drawn, 'untouched');
    assert.equal((await cs([1, 1, 20, 3])).drawn, 'hidden'); // b = 1 is not shown
    const picked = await view();
    await shotBothThemes(at, 'attention-4d-slices-b0');
    // the outer-dimension field: b = 1
    await at.fill('[data-tensor="0"] .tl-card-controls input', '1');
    await at.press('[data-tensor="0"] .tl-card-controls input', 'Enter');
    await waitViewer(at, () => window.__viewer.idle && window.__viewer.slices('q_ptr')[0].index[0] === 1, 'b = 1');
    const b1 = await view();
    assert.deepEqual(b1.titles, ['q_ptr[1, 0, :, :]', 'q_ptr[1, 1, :, :]', 'q_ptr[1, 2, :, :]', 'q_ptr[1, 3, :, :]']);
    assert.notEqual(b1.images[1], picked.images[1], 'the second slice shows other cells for b = 1');
    assert.equal((await cs([1, 1, 20, 3])).drawn, 'untouched'); // program 3 is b = 0
    assert.equal((await cs([0, 1, 20, 3])).drawn, 'hidden');
    await at.click('.tl-prog-all');
    await waitViewer(at, () => window.__viewer.idle && window.__viewer.state().programs === null, 'all programs');
    const c = await cs([1, 1, 20, 3]);
    assert.deepEqual([c.drawn, c.program], ['followed', 1 + 2 * 5]); // program (1, 5): bh 5 = b 1, h 1
    await shotBothThemes(at, 'attention-4d-slices-b1');
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
