// Small helpers to drive the VS Code workbench (code-server) the way a user does: keyboard and clicks.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const norm = (s) => String(s ?? '').replace(/\u00a0/g, ' ');

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    this.shots = 0;
    fs.mkdirSync(artifacts, { recursive: true });
  }

  async shot(name) {
    const file = path.join(this.artifacts, `${String(++this.shots).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  async open(url, folder) {
    await this.page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
    await this.page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    await this.page
      .locator('.explorer-folders-view')
      .waitFor({ timeout: 60000 })
      .catch(() => {});
  }

  get editor() {
    return this.page.locator('.editor-group-container.active .monaco-editor[data-uri^="file://"]').first();
  }

  /** Quick Open (Ctrl+P) a file by name. `editor`: what its editor shows once open, null to wait for its tab
   * only (a notebook's cell editors: which of them Playwright counts as visible varies from run to run). */
  async openFile(name, editor = '.editor-group-container.active .view-lines') {
    // Up to three tries: a webview that finishes loading takes the focus, and Quick Open closes when it
    // loses it (seen once in CI under load, between Ctrl+P and the typing); a file that is missing fails all three.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Control+P');
      const input = this.page.locator('.quick-input-widget input');
      try {
        await input.waitFor({ state: 'visible' });
        await input.fill(name, { timeout: 10000 });
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
        await this.page.keyboard.press('Escape');
      }
    }
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
    await this.page.keyboard.press('Enter');
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
    if (editor) await this.page.locator(editor).first().waitFor();
    await this.page.waitForTimeout(300);
  }

  /** Runs a command from the palette by its title ("Triton Lens: Restart Server"). */
  async command(title) {
    // Up to three tries: on a loaded machine the palette's filtering can miss a command registered a moment
    // ago (1 run in 4 at load 11); a command that is really missing fails all three.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('F1');
      const input = this.page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill(`>${title}`);
      const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
      try {
        await row.waitFor({ timeout: 20000 });
      } catch (e) {
        if (attempt >= 3) throw e;
        await this.page.keyboard.press('Escape');
        continue;
      }
      await row.click();
      return;
    }
  }

  /** Puts the cursor at the start of 1-based `line` (Ctrl+G), focus in the editor. */
  async gotoLine(line, col = 1) {
    await this.page.keyboard.press('Control+G');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`:${line}:${col}`);
    await this.page.keyboard.press('Enter');
    await this.page.waitForTimeout(150);
  }

  /** The rendered text of a 1-based line of the active editor, inlay hints included. */
  async lineText(line) {
    return this.page
      .evaluate((l) => {
        const ed = [...document.querySelectorAll('.editor-group-container.active .monaco-editor')].find((e) =>
          e.querySelector('.view-lines'),
        );
        if (!ed) return null;
        const nums = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')];
        const num = nums.find((n) => n.textContent.trim() === String(l));
        if (!num) return null;
        const top = num.parentElement.style.top;
        const row = [...ed.querySelectorAll('.view-lines .view-line')].find((v) => v.style.top === top);
        return row ? row.textContent : null;
      }, line)
      .then(norm);
  }

  /** Viewport point at the middle of the first occurrence of `needle` in the editor line containing `lineText`. */
  async pointAt(lineText, needle) {
    return this.page.evaluate(
      ([lt, nd]) => {
        const line = [...document.querySelectorAll('.editor-group-container.active .view-lines .view-line')].find((l) =>
          l.textContent.replace(/\u00a0/g, ' ').includes(lt),
        );
        if (!line) return null;
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        const nodes = [];
        let text = '';
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          nodes.push([n, text.length]);
          text += n.textContent;
        }
        const at = text.replace(/\u00a0/g, ' ').indexOf(nd);
        if (at < 0) return null;
        const mid = at + Math.floor(nd.length / 2);
        const [node, start] = nodes.filter(([, off]) => off <= mid).pop();
        const r = document.createRange();
        r.setStart(node, mid - start);
        r.setEnd(node, mid - start + 1);
        const b = r.getBoundingClientRect();
        return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
      },
      [lineText, needle],
    );
  }

  /** Status bar entry text containing `text`. */
  statusItem(text) {
    return this.page.locator('.statusbar-item', { hasText: text }).first();
  }
}
