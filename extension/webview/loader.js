// The page's requests to its host (PROTOCOL.md): the kernels overview, a launch (its tensors' access
// maps, tl.dot executions, performance), value maps and value blocks. A load writes its answer into
// the store and then tells the controller through `show`, which renders; it never touches the DOM
// itself. Every load takes a sequence number (store.nextLoad) so that the answer of a load that a
// newer one overtook is dropped instead of drawn.

import { decodeValueMap } from './values.js';
import { kernelToShow, launchToShow, chooseFollow, launchModel } from './derive.js';
import * as store from './store.js';

const { state } = store;
// Without a tensor list in the overview, the page probes tensor 0, 1, 2, ... up to this many.
const MAX_PROBED_TENSORS = 64;

/**
 * @param host  host.js's interface
 * @param show  the controller's side: message(text, kind), noKernels(overview), kernels(list, k),
 *              launches(k), noLaunch(k), launchPicked(li), launch() (a launch model is in the
 *              store), valueMap(tm) (a value map arrived)
 */
export function createLoader(host, show) {
  async function loadOverview(saved) {
    const seq = store.nextLoad();
    store.beginWork();
    try {
      const ov = await host.request('kernels', {});
      if (!store.isCurrent(seq)) return;
      store.setOverview(ov);
      const kernels = (ov && ov.kernels) || [];
      if (!kernels.length) {
        store.clearLaunch();
        show.noKernels(ov);
        return;
      }
      const k = kernelToShow(state, kernels, saved);
      show.kernels(kernels, k);
      await selectKernel(k, launchToShow(state, k, saved), seq);
    } catch (e) {
      if (store.isCurrent(seq)) show.message(`Could not load kernels: ${e.message}`, 'error');
    } finally {
      store.endWork();
      store.markLoaded();
    }
  }

  async function selectKernel(k, launchIndex, seq = store.nextLoad()) {
    store.setKernel(k);
    const launches = k.launches || [];
    show.launches(k);
    if (!launches.length) {
      store.clearLaunch();
      show.noLaunch(k);
      store.save();
      return;
    }
    const li = launches.find((l) => l.index === launchIndex) || launches[0];
    show.launchPicked(li);
    await loadLaunch(li, seq);
  }

  async function fetchTensorMaps(li) {
    const base = { launch: li.index };
    if (Array.isArray(li.tensors)) {
      const maps = await Promise.all(
        li.tensors.map((t) =>
          host.request('accessMap', { ...base, tensor: typeof t === 'object' ? t.index : t }).catch((e) => ({
            error: e.message,
            tensor: typeof t === 'object' ? t : { index: t, name: `tensor ${t}` },
          })),
        ),
      );
      return maps;
    }
    // The host must answer an error for a tensor index past the last (PROTOCOL.md): that ends the probe.
    const maps = [];
    for (let i = 0; i < MAX_PROBED_TENSORS; i++) {
      try {
        maps.push(await host.request('accessMap', { ...base, tensor: i }));
      } catch {
        break;
      }
    }
    return maps;
  }

  async function loadLaunch(li, seq = store.nextLoad()) {
    store.beginWork();
    try {
      store.setLaunchInfo(li);
      // The extra panels' failures are shown in them: the maps still draw.
      const extra = (method) => host.request(method, { launch: li.index }).catch((e) => ({ error: e.message }));
      const [maps, perf, dots] = await Promise.all([fetchTensorMaps(li), extra('performance'), extra('dots')]);
      if (!store.isCurrent(seq)) return;
      store.setExtras(perf, dots);
      show.message('');
      store.setLaunch(launchModel(li, maps, state.views));
      store.settleFollow(chooseFollow(state));
      show.launch();
    } catch (e) {
      if (store.isCurrent(seq)) show.message(`Could not load launch ${li.index}: ${e.message}`, 'error');
    } finally {
      store.endWork();
    }
  }

  /**
   * The value map of a tensor for a Values mode: requested the first time it is asked for, then
   * kept on the tensor; undefined until it arrives (show.valueMap(tm) then asks for a redraw).
   */
  function valueMap(tm, when) {
    const got = tm.valueMaps.get(when);
    if (got && got.ready) return got.vm;
    if (!got) {
      const entry = { ready: false, vm: null };
      tm.valueMaps.set(when, entry);
      store.beginWork();
      host
        .request('valueMap', { launch: state.launchInfo.index, tensor: tm.index, when })
        .then((r) => {
          entry.vm = decodeValueMap(r);
        })
        .catch((e) => {
          entry.vm = { none: e.message };
        })
        .finally(() => {
          entry.ready = true;
          store.endWork();
          show.valueMap(tm);
        });
    }
    return undefined;
  }

  /** The block of `count` values from `start` of a tensor: one request per block, kept until it fails. */
  function valueBlock(tm, start, count) {
    let p = tm.valueCache.get(start);
    if (!p) {
      p = host
        .request('values', { launch: state.launchInfo.index, tensor: tm.index, start, count })
        .then((r) => ({ start: r && typeof r.start === 'number' ? r.start : start, values: (r && r.values) || [] }));
      tm.valueCache.set(start, p);
      p.catch(() => tm.valueCache.delete(start));
    }
    return p;
  }

  return { loadOverview, selectKernel, loadLaunch, valueMap, valueBlock };
}
