// The host's events (PROTOCOL.md): the editor's cursor moved, the results changed, or the editor
// asked for a kernel. The cursor follows the access line under it, else switches to the launch or
// kernel it is on; other lines leave the view alone.

import { findKernel, kernelForCursor, launchAt } from './derive.js';
import * as store from './store.js';
import { resetPalettes } from './theme.js';

/** @typedef {import('./host.js').HostEvent} HostEvent */
/** @typedef {import('./host.js').CursorEvent} CursorEvent */
/** @typedef {import('./host.js').SelectEvent} SelectEvent */

const { state } = store;

/**
 * @param {import('./loader.js').Loader} loader
 * @param {ReturnType<typeof import('./view-header.js').createHeaderView>} header  (pickKernel, pickLaunch, follow)
 * @param {(file: string, line: number) => boolean} setFollow  the controller's: follow the access line
 *        at (file, line), false when none is there
 */
export function createHostEvents(loader, header, setFollow) {
  /** @param {CursorEvent} ev */
  async function cursor(ev) {
    const file = ev.file ? String(ev.file) : (state.follow && state.follow.file) || '';
    const line = Number(ev.line);
    if (!Number.isFinite(line)) return;
    store.setCursor({ file, line });
    if (!state.launch) return;
    if (setFollow(file, line)) return;
    const at = launchAt(state, file, line);
    if (at && at.launch !== state.launchInfo) {
      // the cursor is on a launch: show that launch
      header.pickKernel(at.kernel);
      if (at.kernel !== state.kernel) await loader.selectKernel(at.kernel, at.launch.index);
      else {
        header.pickLaunch(at.launch);
        await loader.loadLaunch(at.launch);
      }
      return;
    }
    const k = kernelForCursor(state, file, line);
    if (k && k !== state.kernel) {
      // the cursor is inside another kernel of this file: switch to it
      header.pickKernel(k);
      store.setPendingFollow({ file, line });
      await loader.selectKernel(k, null);
      return;
    }
    header.follow();
  }

  /** @param {SelectEvent} ev */
  async function select(ev) {
    store.setPendingFollow({
      kernel: ev.kernel ? String(ev.kernel) : null,
      kernelFile: ev.file || null,
      file: ev.file || '',
      line: Number(ev.line) || 0,
    });
    if (ev.line) store.setCursor({ file: String(ev.file || ''), line: Number(ev.line) });
    const k = findKernel((state.overview && state.overview.kernels) || [], ev.kernel, ev.file);
    if (k) {
      header.pickKernel(k);
      await loader.selectKernel(k, state.kernel === k && state.launchInfo ? state.launchInfo.index : null);
    } else {
      await loader.loadOverview(null); // not known yet: results may be newer than ours
    }
  }

  /** @param {HostEvent} ev */
  return async function onEvent(ev) {
    if (ev.type === 'cursor') await cursor(ev);
    else if (ev.type === 'refresh') {
      resetPalettes();
      await loader.loadOverview(null);
    } else if (ev.type === 'select') await select(ev);
  };
}
