// The access-map page's store (extension/webview/store.js) and its loads from a host
// (extension/webview/loader.js), answered from the page's fixtures.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createLoader } from '../../webview/loader.js';
import * as store from '../../webview/store.js';
// @ts-expect-error: a plain .mjs module of the page's tests, without types
import { answer } from '../../../tests/webview/fakehost.mjs';
import { fixture, loaded } from './fixtures';

const { state, page } = store;
const VA = '/work/k/vector_add.py';
const INITIAL = JSON.stringify(store.snapshot());

beforeEach(() => {
  // the store is one per page: put back what a fresh page starts with
  Object.assign(state, store.initialState());
  Object.assign(page, { busy: 0, loadedOnce: false });
  store.connectStorage({ getState: () => null, setState: () => {} });
});

describe('persistence', () => {
  it('keeps the selection across a reload of the page', () => {
    let kept: unknown = null;
    store.connectStorage({ getState: () => kept, setState: (s: unknown) => (kept = JSON.parse(JSON.stringify(s))) });
    expect(JSON.stringify(store.snapshot())).toBe(INITIAL);
    const { kernel, launchInfo } = loaded('vector_add', 1);
    store.setKernel(kernel as never);
    store.setLaunchInfo(launchInfo as never);
    store.setFollow({ file: VA, line: 13 });
    store.selectPrograms(new Set([3, 1]));
    store.patchView('x_ptr', { wrap: 20 });
    store.setValuesMode('before');
    store.setGpu('a100');
    store.save();
    expect(kept).toEqual({
      kernel: 'add_kernel',
      kernelFile: VA,
      launch: 1,
      follow: { file: VA, line: 13 },
      programs: [3, 1],
      programsByKernel: {},
      views: { x_ptr: { wrap: 20 } },
      values: 'before',
      gpu: 'a100',
    });
    Object.assign(state, { follow: null, programs: null, views: {}, values: 'off', gpu: 'h100' });
    expect(store.restore()).toMatchObject({ kernel: 'add_kernel', launch: 1 });
    expect([state.follow, Array.from(state.programs!), state.views, state.values, state.gpu]).toEqual([
      { file: VA, line: 13 },
      [3, 1],
      { x_ptr: { wrap: 20 } },
      'before',
      'a100',
    ]);
  });
  it('takes back only the fields of the right shape', () => {
    const saved = { follow: { file: VA, line: '13' }, programs: [1, 'x', 2.5, 4], values: 'all', gpu: 7, views: 3 };
    store.connectStorage({ getState: () => saved, setState: () => {} });
    expect(store.restore()).toBe(saved);
    expect([state.follow, Array.from(state.programs!), state.values, state.gpu, state.views]).toEqual([
      null,
      [1, 4],
      'off',
      'h100',
      {},
    ]);
    store.connectStorage({ getState: () => 'garbage', setState: () => {} });
    expect(store.restore()).toBeNull();
  });
});

describe('mutations', () => {
  it('keeps each kernel its own program selection, also across a save and restore', () => {
    const a = { name: 'add_kernel', file: VA } as never;
    const b = { name: 'softmax_kernel', file: VA } as never;
    store.setKernel(a);
    store.selectPrograms(new Set([2, 5]));
    store.setKernel(b);
    expect(state.programs).toBeNull(); // a kernel seen for the first time: all its programs
    store.selectPrograms(new Set([7]));
    let kept: unknown = null;
    store.connectStorage({ getState: () => kept, setState: (s: unknown) => (kept = JSON.parse(JSON.stringify(s))) });
    store.save();
    expect((kept as { programsByKernel: unknown }).programsByKernel).toEqual({
      [store.kernelKey({ name: 'add_kernel', file: VA })]: { programs: [2, 5], pidFields: null },
    });
    Object.assign(state, store.initialState());
    store.restore();
    store.setKernel(b);
    expect(Array.from(state.programs!)).toEqual([7]);
    store.setKernel(a);
    expect(Array.from(state.programs!)).toEqual([2, 5]);
    store.setKernel(a); // a new run of the same kernel keeps it
    expect(Array.from(state.programs!)).toEqual([2, 5]);
  });
  it('keeps the selected programs the new launch has', () => {
    const { launch } = loaded('vector_add', 0); // 2 programs
    store.selectPrograms(new Set([1, 3]));
    store.setLaunch(launch);
    expect(Array.from(state.programs!)).toEqual([1]);
    store.selectPrograms(new Set([2, 3]));
    store.setLaunch(launch);
    expect(state.programs).toBeNull();
  });
  it('uses up a pending line with the line chosen for a launch', () => {
    store.setPendingFollow({ file: VA, line: 12 });
    store.settleFollow({ file: VA, line: 12 });
    expect([state.pendingFollow, state.follow]).toEqual([null, { file: VA, line: 12 }]);
  });
  it('rebuilds the layout of a tensor whose row width changed, and saves the width by name', () => {
    const tm = { name: 'x_ptr', view: { wrap: 32, slice: 0 }, layout: {} } as never as {
      view: unknown;
      layout: unknown;
    };
    store.setWrap(tm as never, 50);
    expect([tm.view, tm.layout, state.views]).toEqual([{ wrap: 50, slice: 0 }, null, { x_ptr: { wrap: 50 } }]);
  });
  it('tells the answer of the latest load from older ones', () => {
    const a = store.nextLoad();
    const b = store.nextLoad();
    expect([store.isCurrent(a), store.isCurrent(b)]).toEqual([false, true]);
  });
});

// ---------------------------------------------------------------- the loader

type Call = [string, Record<string, unknown>];

/** A host answering from a fixture after `delay(method, params)` ms, that logs the requests. */
function fakeHost(fix: unknown, delay: (m: string, p: Record<string, unknown>) => number = () => 0) {
  const calls: Call[] = [];
  return {
    calls,
    host: {
      kind: 'http',
      request(method: string, params: Record<string, unknown> = {}) {
        calls.push([method, params]);
        return new Promise((resolve, reject) =>
          setTimeout(
            () => {
              try {
                resolve(answer(fix, method, params));
              } catch (e) {
                reject(e);
              }
            },
            delay(method, params),
          ),
        );
      },
      onEvent() {},
      reveal() {},
      getState: () => null,
      setState() {},
      ready() {},
    },
  };
}

function recorder() {
  const log: string[] = [];
  const show = new Proxy({} as Record<string, (...a: unknown[]) => void>, {
    get:
      (_, name: string) =>
      (...args: unknown[]) =>
        log.push(`${name}${name === 'message' ? `:${args[0]}` : ''}`),
  });
  return { log, show };
}

describe('loader', () => {
  it('loads the overview, the first kernel and its first launch into the store, then shows it', async () => {
    const { host, calls } = fakeHost(fixture('vector_add'));
    const { log, show } = recorder();
    await createLoader(host as never, show as never).loadOverview(null);
    expect(log).toEqual(['kernels', 'launches', 'launchPicked', 'message:', 'launch']);
    expect([state.kernel!.name, state.launchInfo!.index, state.launch!.info.index]).toEqual(['add_kernel', 0, 0]);
    expect(state.launch!.tensors.map((t: { name: string }) => t.name)).toEqual(['x_ptr', 'y_ptr', 'z_ptr']);
    expect(state.follow).toEqual({ file: VA, line: 12 });
    // no tensor list in the overview: tensors 0, 1, 2, ... until the host says there is none
    const maps = calls.filter(([m]) => m === 'accessMap').map(([, p]) => p.tensor);
    expect(maps).toEqual([0, 1, 2, 3]);
    expect(state.perf).toMatchObject({ error: 'no performance for 0' }); // a panel's failure is kept for it
    expect([page.busy, page.loadedOnce]).toEqual([0, true]);
  });
  it('drops the answer of a load that a newer one overtook', async () => {
    const fix = fixture('vector_add');
    const slow = (m: string, p: Record<string, unknown>) => (m === 'accessMap' && p.launch === 1 ? 30 : 0);
    const { host } = fakeHost(fix, slow);
    const { log, show } = recorder();
    const loader = createLoader(host as never, show as never);
    const [li0, li1] = (fix.kernels.kernels[0] as never as { launches: never[] }).launches;
    const first = loader.loadLaunch(li1);
    const second = loader.loadLaunch(li0);
    await Promise.all([first, second]);
    expect(log).toEqual(['message:', 'launch']);
    expect(state.launch!.info.index).toBe(0);
  });
  it('asks for values of the launch that is drawn, also after loading another one failed', async () => {
    const fix = fixture('vector_add');
    (fix.maps['1/0'] as { accesses: { touched: unknown }[] }).accesses[0].touched = { runs: [1] }; // malformed
    const { host, calls } = fakeHost(fix);
    const { log, show } = recorder();
    const loader = createLoader(host as never, show as never);
    await loader.loadOverview(null);
    const [, li1] = (fix.kernels.kernels[0] as never as { launches: never[] }).launches;
    await loader.loadLaunch(li1);
    expect(log.at(-1)).toBe('message:Could not load launch 1: ENC runs: odd length');
    expect([state.launchInfo!.index, state.launch!.info.index]).toEqual([1, 0]);
    const x = state.launch!.tensors[0];
    calls.length = 0;
    await loader.valueBlock(x, 0, 64);
    expect(loader.valueMap(x, 'after')).toBeUndefined();
    expect(calls).toEqual([
      ['values', { launch: 0, tensor: 0, start: 0, count: 64 }],
      ['valueMap', { launch: 0, tensor: 0, when: 'after' }],
    ]);
  });
  it('keeps one request per value block, and forgets a failed one', async () => {
    const fix = fixture('vector_add');
    const { host, calls } = fakeHost(fix);
    const loader = createLoader(host as never, recorder().show as never);
    await loader.loadOverview(null);
    const [x, y] = state.launch!.tensors;
    calls.length = 0;
    const a = loader.valueBlock(x, 0, 64);
    expect(loader.valueBlock(x, 0, 64)).toBe(a);
    await expect(a).resolves.toMatchObject({ start: 0, values: expect.any(Array) });
    delete (fix.values as Record<string, unknown>)['0/1'];
    await expect(loader.valueBlock(y, 0, 64)).rejects.toThrow('no tensor 1 in launch 0');
    expect(loader.valueBlock(y, 0, 64)).not.toBeNull();
    expect(calls.filter(([m]) => m === 'values')).toHaveLength(3);
  });
  it('asks nothing for a value once the launch is gone (a refresh emptied the page)', async () => {
    const { host, calls } = fakeHost(fixture('vector_add'));
    const loader = createLoader(host as never, recorder().show as never);
    await loader.loadOverview(null);
    const x = state.launch!.tensors[0];
    store.clearLaunch();
    calls.length = 0;
    expect(loader.valueBlock(x, 0, 64)).toBeNull();
    expect(calls).toEqual([]);
  });
  it('fetches a value map once, then answers it or why there is none, and asks for a redraw', async () => {
    const { host } = fakeHost(fixture('vector_add'));
    const { log, show } = recorder();
    const loader = createLoader(host as never, show as never);
    await loader.loadOverview(null);
    const x = state.launch!.tensors[0];
    log.length = 0;
    expect(loader.valueMap(x, 'after')).toBeUndefined();
    expect(page.busy).toBe(1);
    expect(loader.valueMap(x, 'after')).toBeUndefined(); // still one request
    await vi.waitFor(() => expect(log).toEqual(['valueMap']));
    expect(loader.valueMap(x, 'after')).toEqual({ none: 'no valueMap for 0/0/after' });
    expect(page.busy).toBe(0);
  });
});
