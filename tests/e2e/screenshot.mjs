// Takes docs/screenshot.png for the README: examples/add_bias_2d.py with its inlay hints and out-of-bounds
// diagnostics, and the access map following the tile load. Needs `make vsix` and tests/e2e/setup.sh.
//   node tests/e2e/screenshot.mjs [out.png]
import * as path from 'node:path';
import { launchBrowser, loadEnv, REPO, startCodeServer } from './lib/codeServer.mjs';
import { Workbench } from './lib/workbench.mjs';

const out = path.resolve(REPO, process.argv[2] || 'docs/screenshot.png');
const env = loadEnv();
const cs = await startCodeServer({
  env,
  dir: path.join(REPO, '.e2e', 'screenshot'),
  vsix: path.join(REPO, 'triton-lens.vsix'),
  settings: {
    'workbench.colorTheme': process.env.DEMO_THEME || 'Default Dark Modern',
    'editor.fontSize': 13,
    'workbench.activityBar.location': 'hidden',
  },
  machineSettings: { 'tritonLens.python': path.join(REPO, '.venv', 'bin', 'python') },
});
const browser = await launchBrowser(env);
try {
  const page = await browser.newPage({ viewport: { width: 1680, height: 1000 }, deviceScaleFactor: 1 });
  const wb = new Workbench(page, path.join(REPO, 'tests', 'e2e', 'artifacts', 'screenshot'));
  await wb.open(cs.url, path.join(REPO, 'examples'));
  await wb.openFile('add_bias_2d.py');
  await page.keyboard.press('Control+B'); // side bar away: room for the code and the map
  await wb.statusItem('Triton Lens: done').waitFor({ timeout: 180000 });
  await page.locator('.codelens-decoration a', { hasText: 'Visualize this kernel' }).first().click();
  let frame;
  for (let i = 0; i < 200 && !frame; i++) {
    for (const f of page.frames()) {
      if (await f.evaluate(() => !!window.__viewer).catch(() => false)) frame = f;
    }
    if (!frame) await page.waitForTimeout(250);
  }
  if (!frame) throw new Error('the access map did not open');
  await frame.waitForFunction(() => window.__viewer.idle && window.__viewer.state().tensors.length > 0, undefined, {
    timeout: 60000,
  });
  const pt = await wb.pointAt('tile = tl.load(', 'tile');
  await page.mouse.click(pt.x, pt.y);
  await frame.waitForFunction(() => window.__viewer.state().follow?.line === 19 && window.__viewer.idle, undefined, {
    timeout: 30000,
  });
  // give the code (and its hints) more of the width than the map
  const sash = page.locator('.part.editor .monaco-sash.vertical').first();
  const sb = await sash.boundingBox().catch(() => null);
  if (sb) {
    await page.mouse.move(sb.x + sb.width / 2, sb.y + 200);
    await page.mouse.down();
    await page.mouse.move(sb.x + sb.width / 2 + 110, sb.y + 200, { steps: 8 });
    await page.mouse.up();
  }
  await page.mouse.move(560, 700); // an empty spot: no tooltip in the picture
  await frame.waitForFunction(() => window.__viewer.idle, undefined, { timeout: 30000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await cs.stop();
}
