// One e2e test file's real VS Code: a fresh workspace with its files, code-server with the built .vsix,
// a Chromium page on the workbench, and what a failing step leaves behind (a screenshot, the logs).
// Both e2e files (vscode.test.mjs, notebook.test.mjs) start and end theirs the same way through it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { extensionLogs, launchBrowser, loadEnv, REPO, startCodeServer } from './codeServer.mjs';
import { Workbench } from './workbench.mjs';

export const VSIX = path.resolve(REPO, process.env.VSIX || 'triton-lens.vsix');
export const PYTHON = process.env.TRITON_LENS_PYTHON || path.join(REPO, '.venv', 'bin', 'python');

/**
 * @param {{work: string, artifacts: string, files: [string, string][], settings: object,
 *          clearArtifacts?: (entry: string) => boolean}} opts
 *   work: the file's own folder (code-server's data, the workspace); files: [source, name in the
 *   workspace]; clearArtifacts: which entries of the artifacts folder a new run removes (default all)
 */
export function e2eSession({ work, artifacts, files, settings, clearArtifacts = () => true }) {
  const s = { env: null, cs: null, browser: null, page: null, wb: null, workspace: path.join(work, 'workspace') };
  s.start = async () => {
    s.env = loadEnv();
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
    for (const e of fs.existsSync(artifacts) ? fs.readdirSync(artifacts) : [])
      if (clearArtifacts(e)) fs.rmSync(path.join(artifacts, e), { recursive: true, force: true });
    fs.rmSync(s.workspace, { recursive: true, force: true });
    fs.mkdirSync(s.workspace, { recursive: true });
    for (const [src, name] of files) fs.copyFileSync(src, path.join(s.workspace, name));
    s.cs = await startCodeServer({
      env: s.env,
      dir: path.join(work, 'code-server'),
      vsix: VSIX,
      settings,
      machineSettings: { 'tritonLens.python': PYTHON },
    });
    s.browser = await launchBrowser(s.env);
    s.page = await s.browser.newPage({ viewport: { width: 1600, height: 1000 } });
    s.wb = new Workbench(s.page, artifacts);
    await s.wb.open(s.cs.url, s.workspace);
  };
  s.stop = async () => {
    if (s.page) await s.wb.shot('final').catch(() => {});
    await s.browser?.close().catch(() => {});
    await s.cs?.stop();
    if (s.cs) {
      fs.mkdirSync(artifacts, { recursive: true });
      fs.copyFileSync(s.cs.logFile, path.join(artifacts, 'code-server.log'));
      fs.writeFileSync(path.join(artifacts, 'extension.log'), extensionLogs(s.cs.userData));
    }
  };
  /**
   * it(), plus a screenshot of the moment a step fails (and whatever `onFail(tag)` keeps of it).
   * @param {string} name
   * @param {() => Promise<void>} fn
   */
  s.step = (name, fn, onFail = async (_tag) => {}) =>
    it(name, async () => {
      try {
        await fn();
      } catch (e) {
        const tag = `FAILED-${name.replace(/[^\w]+/g, '-').slice(0, 50)}`;
        await s.wb?.shot(tag).catch(() => {});
        await onFail(tag).catch(() => {});
        throw e;
      }
    });
  return s;
}

/**
 * The access-map page inside the webview's iframes: the frame where the page's `window.__viewer` hook
 * lives (with `kernel`: once it is idle showing that kernel).
 */
export async function viewerFrame(page, { kernel = null, timeout = 60000 } = {}) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    for (const f of page.frames()) {
      const ok = await f
        .evaluate(
          (k) =>
            typeof window.__viewer === 'object' &&
            window.__viewer !== null &&
            (k === null || (window.__viewer.idle && window.__viewer.state().kernel === k)),
          kernel,
        )
        .catch(() => false);
      if (ok) return f;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no webview frame with window.__viewer${kernel ? ` showing ${kernel}` : ''}`);
}

/** Waits until `pred(arg)` holds in the page's frame; the error says what the page was in. */
export async function waitViewer(frame, pred, what, { arg = undefined, timeout = 60000 } = {}) {
  await frame.waitForFunction(pred, arg, { timeout, polling: 100 }).catch(async (e) => {
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
