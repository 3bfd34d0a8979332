// The page's requests to its host (PROTOCOL.md): the kernels overview, a launch (its tensors' access
// maps, tl.dot executions, performance), value maps and value blocks. A load writes its answer into
// the store and then tells the controller through `show`, which renders; it never touches the DOM
// itself. Every load takes a sequence number (store.nextLoad) so that the answer of a load that a
// newer one overtook is dropped instead of drawn.

import { decodeValueMap } from './values.js';
import { kernelToShow, launchToShow, chooseFollow, launchModel } from './derive.js';
import * as store from './store.js';

/** @typedef {import('./host.js').Host} Host */
/** @typedef {import('./store.js').Kernel} Kernel */
/** @typedef {import('./store.js').Launch} Launch */
/** @typedef {import('./store.js').KernelsResult} KernelsResult */
/** @typedef {import('./store.js').SavedSelection} SavedSelection */
/** @typedef {import('./model.js').TensorModel} TensorModel */
/** @typedef {import('./model.js').TensorMapAnswer} TensorMapAnswer */
/** @typedef {import('./model.js').ValueMapEntry} ValueMapEntry */
/** @typedef {import('./model.js').ValueBlock} ValueBlock */
/** @typedef {import('./values.js').ValueMap} ValueMap */
/** @typedef {import('./values.js').NoValueMap} NoValueMap */
/** @typedef {import('../src/viewerProtocol').DotTilesResult} DotTilesResult */
/**
 * The controller's side of the loads: what to show once the store has the answer.
 * @typedef {object} LoaderShow
 * @property {(text: string, kind?: string) => void} message
 * @property {(ov: KernelsResult) => void} noKernels  the overview has no kernel
 * @property {(kernels: Kernel[], k: Kernel) => void} kernels  the overview's, k is shown
 * @property {(k: Kernel) => void} launches  k's launches
 * @property {(k: Kernel) => void} noLaunch  k was never launched
 * @property {(li: Launch) => void} launchPicked  li is being loaded
 * @property {(launch: import('./store.js').LaunchModel) => void} launch  the store has this new launch model
 * @property {(tm: TensorModel) => void} valueMap  a value map of tm arrived
 * @property {() => void} dotTiles  tile values of a tl.dot execution arrived
 */

/** @typedef {ReturnType<typeof createLoader>} Loader */

const { state } = store;
// Without a tensor list in the overview, the page probes tensor 0, 1, 2, ... up to this many.
const MAX_PROBED_TENSORS = 64;

/**
 * @param {Host} host
 * @param {LoaderShow} show
 */
export function createLoader(host, show) {
  /** @param {SavedSelection | null} saved  what the page kept of an earlier session */
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
      if (store.isCurrent(seq)) show.message(`Could not load kernels: ${/** @type {Error} */ (e).message}`, 'error');
    } finally {
      store.endWork();
      store.markLoaded();
    }
  }

  /**
   * @param {Kernel} k
   * @param {number | null} launchIndex  null: its first launch
   * @param {number} [seq]  the load this is part of
   */
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

  /**
   * @param {Launch} li
   * @returns {Promise<TensorMapAnswer[]>}
   */
  async function fetchTensorMaps(li) {
    const base = { launch: li.index };
    if (Array.isArray(li.tensors)) {
      // PROTOCOL.md: the tensors, or only their indices
      const listed = /** @type {(import('../src/viewerProtocol').Tensor | number)[]} */ (li.tensors);
      const maps = await Promise.all(
        listed.map((t) =>
          host.request('accessMap', { ...base, tensor: typeof t === 'object' ? t.index : t }).catch((e) => ({
            error: e.message,
            tensor: typeof t === 'object' ? t : { index: t, name: `tensor ${t}` },
          })),
        ),
      );
      return maps;
    }
    // The host must answer an error for a tensor index past the last (PROTOCOL.md): that ends the probe.
    /** @type {TensorMapAnswer[]} */
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

  /**
   * @param {Launch} li
   * @param {number} [seq]  the load this is part of
   */
  async function loadLaunch(li, seq = store.nextLoad()) {
    store.beginWork();
    try {
      store.setLaunchInfo(li);
      // The extra panels' failures are shown in them: the maps still draw.
      /**
       * @template {'performance' | 'dots'} M
       * @param {M} method
       * @returns {Promise<import('./host.js').ViewerResult<M> | import('./model.js').Failed>}
       */
      const extra = (method) => host.request(method, { launch: li.index }).catch((e) => ({ error: e.message }));
      const [maps, perf, dots] = await Promise.all([fetchTensorMaps(li), extra('performance'), extra('dots')]);
      if (!store.isCurrent(seq)) return;
      store.setExtras(perf, dots);
      tiles.clear(); // the tile values of the launch loaded before (maybe of an earlier run)
      show.message('');
      const launch = launchModel(li, maps, state.views);
      store.setLaunch(launch);
      store.settleFollow(chooseFollow(state));
      show.launch(launch);
    } catch (e) {
      if (store.isCurrent(seq))
        show.message(`Could not load launch ${li.index}: ${/** @type {Error} */ (e).message}`, 'error');
    } finally {
      store.endWork();
    }
  }

  /**
   * The launch whose tensors are drawn, for their values. Not state.launchInfo: a load sets that to
   * the next launch before its maps arrive, and leaves it there when the load fails.
   */
  function drawnLaunch() {
    return /** @type {import('./store.js').LaunchModel} */ (state.launch).info;
  }

  /**
   * The value map of a tensor for a Values mode: requested the first time it is asked for, then
   * kept on the tensor; undefined until it arrives (show.valueMap(tm) then asks for a redraw).
   * @param {TensorModel} tm
   * @param {'after' | 'before'} when
   * @returns {ValueMap | NoValueMap | null | undefined}
   */
  function valueMap(tm, when) {
    const got = tm.valueMaps.get(when);
    if (got && got.ready) return got.vm;
    if (!got) {
      /** @type {ValueMapEntry} */
      const entry = { ready: false, vm: null };
      tm.valueMaps.set(when, entry);
      store.beginWork();
      host
        .request('valueMap', { launch: drawnLaunch().index, tensor: tm.index, when })
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

  /**
   * The block of `count` values from `start` of a tensor: one request per block, kept until it fails.
   * @param {TensorModel} tm
   * @param {number} start
   * @param {number} count
   * @returns {Promise<ValueBlock> | null}  null: the launch is gone (the pointer's timer outlived it)
   */
  function valueBlock(tm, start, count) {
    if (!state.launch) return null;
    let p = tm.valueCache.get(start);
    if (!p) {
      p = host.request('values', { launch: drawnLaunch().index, tensor: tm.index, start, count }).then((r) => ({
        start: r && typeof r.start === 'number' ? r.start : start,
        values: (r && r.values) || [],
        sampled: (r && r.sampled) || null,
      }));
      tm.valueCache.set(start, p);
      p.catch(() => tm.valueCache.delete(start));
    }
    return p;
  }

  /** @type {Map<string, {ready: boolean, tiles: DotTilesResult | import('./model.js').Failed | null}>} */
  const tiles = new Map();

  /**
   * The tile values of tl.dot execution `index` of the drawn launch: requested the first time, then
   * kept; undefined until they arrive (show.dotTiles() then asks for a redraw).
   * @param {number} index
   * @returns {DotTilesResult | import('./model.js').Failed | undefined}
   */
  function dotTiles(index) {
    if (!state.launch) return undefined;
    const launch = drawnLaunch().index;
    const key = `${launch}\n${index}`;
    const got = tiles.get(key);
    if (got) return got.ready && got.tiles ? got.tiles : undefined;
    const entry = { ready: false, tiles: /** @type {DotTilesResult | import('./model.js').Failed | null} */ (null) };
    if (tiles.size > 256) tiles.clear(); // a cache of the last few hundred shown, not of a whole run
    tiles.set(key, entry);
    store.beginWork();
    host
      .request('dotTiles', { launch, execution: index })
      .then((r) => {
        entry.tiles = r;
      })
      .catch((e) => {
        entry.tiles = { error: e.message };
      })
      .finally(() => {
        entry.ready = true;
        store.endWork();
        show.dotTiles();
      });
    return undefined;
  }

  return { loadOverview, selectKernel, loadLaunch, valueMap, valueBlock, dotTiles };
}
