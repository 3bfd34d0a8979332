// The access-map page's questions of its state (extension/webview/derive.js), on the page's fixtures.
import { describe, expect, it } from 'vitest';
import {
  MAX_SLICES,
  byProgram,
  chooseFollow,
  clampedIteration,
  findKernel,
  followKindOf,
  followedIterations,
  isFollowedSite,
  kernelForCursor,
  kernelToShow,
  launchAt,
  launchToShow,
  lineAt,
  perfKey,
  pidFieldsShown,
  programsMatching,
  revealTarget,
  singleProgram,
  sliceSpec,
  toggledPrograms,
  viewFor,
} from '../../webview/derive.js';
import { freshState, loaded } from './fixtures';

const VA = '/work/k/vector_add.py';
const OOB = '/work/k/oob.py';
const SM = '/work/k/softmax.py';

describe('launchModel', () => {
  it('builds the launch of the overview entry from its tensors access maps', () => {
    const { launch } = loaded('vector_add', 1);
    expect(launch.grid).toEqual([4, 1, 1]);
    expect(launch.nPrograms).toBe(4);
    expect(launch.tensors.map((t: { name: string }) => t.name)).toEqual(['x_ptr', 'y_ptr', 'z_ptr']);
    expect(Array.from(launch.lines.keys())).toEqual([`${VA}\n12`, `${VA}\n13`, `${VA}\n15`]);
    // 200 elements: the default row width (a power of two about 4:1 wide)
    expect(launch.tensors[0].view).toEqual({ wrap: 32, slice: 0 });
  });
  it('gives each tensor the view saved for its name', () => {
    const { launch } = loaded('vector_add', 1, { y_ptr: { wrap: 50 }, z_ptr: { wrap: 0 } });
    expect(launch.tensors.map((t: { view: unknown }) => t.view)).toEqual([
      { wrap: 32, slice: 0 },
      { wrap: 50, slice: 0 },
      { wrap: 32, slice: 0 }, // 0 is no width
    ]);
  });
});

describe('viewFor', () => {
  const tm = (shape: number[]) => ({ name: 't', meta: { shape } }) as never;
  it('has a row width for 1-D tensors only and a slice for N-D ones only', () => {
    expect(viewFor({}, tm([100]))).toEqual({ wrap: 100, slice: 0 });
    expect(viewFor({ t: { wrap: 7, slice: 3 } }, tm([6, 20]))).toEqual({ wrap: undefined, slice: 0 });
    expect(viewFor({ t: { slice: 3 } }, tm([3, 4, 8]))).toEqual({ wrap: undefined, slice: 3 });
  });
});

describe('the followed line', () => {
  it('is the innermost access line that spans the cursor, in the cursor file', () => {
    const st = freshState(loaded('softmax', 1));
    // the a_ptr load is one call over lines 40-41
    expect(lineAt(st, SM, 41)).toMatchObject({ line: 40, endLine: 41 });
    expect(lineAt(st, SM, 42)).toBeNull();
    expect(lineAt(st, '/elsewhere.py', 40)).toBeNull();
    expect(lineAt(st, '', 43)).toMatchObject({ line: 43 }); // no file: any
    expect(lineAt(freshState(), SM, 40)).toBeNull(); // nothing loaded
  });
  it('of a new launch: the one asked for, then the cursor, then the one followed, then the first', () => {
    const base = loaded('vector_add', 0);
    const follow = { file: VA, line: 15 };
    const cursor = { file: VA, line: 13 };
    expect(chooseFollow(freshState({ ...base, follow, cursor, pendingFollow: { file: VA, line: 12 } }))).toEqual({
      file: VA,
      line: 12,
    });
    expect(chooseFollow(freshState({ ...base, follow, cursor }))).toEqual({ file: VA, line: 13 });
    // a cursor on a line without access does not count
    expect(chooseFollow(freshState({ ...base, follow, cursor: { file: VA, line: 20 } }))).toEqual(follow);
    expect(chooseFollow(freshState(base))).toEqual({ file: VA, line: 12 });
    expect(chooseFollow(freshState())).toBeNull();
  });
  it('colours a store line as a store, a load or a mixed line as a load', () => {
    const base = loaded('vector_add', 0);
    const [x, , z] = base.launch.tensors;
    const st = freshState({ ...base, follow: { file: VA, line: 15 } });
    expect(isFollowedSite(st, { file: VA, line: 15 })).toBe(true);
    expect(isFollowedSite(st, { file: '/other.py', line: 15 })).toBe(false);
    expect(followKindOf(st, z)).toBe('store');
    expect(followKindOf(st, x)).toBe('load'); // not on the line at all
  });
});

describe('iterations', () => {
  it('counts the followed line loop iterations', () => {
    const base = loaded('vector_add', 0);
    const looped = base.launch.tensors[0];
    looped.accesses[0].executions = 5;
    expect(followedIterations(freshState({ ...base, follow: { file: VA, line: 12 } }))).toBe(5);
    expect(followedIterations(freshState({ ...base, follow: { file: VA, line: 13 } }))).toBe(0);
    expect(followedIterations(freshState())).toBe(0);
  });
  it('keeps the iteration shown inside the followed line loop', () => {
    expect(clampedIteration(null, 5)).toBeNull();
    expect(clampedIteration(3, 5)).toBe(3);
    expect(clampedIteration(7, 5)).toBe(4);
    expect(clampedIteration(0, 1)).toBeNull(); // one iteration: no slider
    expect(clampedIteration(2, 0)).toBeNull();
  });
});

describe('programs', () => {
  const grid23 = { grid: [2, 3, 1], nPrograms: 6 };
  it('colours by program while more than one program is shown', () => {
    const base = loaded('vector_add', 0);
    expect(byProgram(freshState(base))).toBe(true); // all of 2
    expect(byProgram(freshState({ ...base, programs: new Set([1]) }))).toBe(false);
    expect(byProgram(freshState({ ...base, programs: new Set([0, 1]) }))).toBe(true);
    expect(byProgram(freshState())).toBe(false);
  });
  it('has a single program only when exactly one is selected', () => {
    expect(singleProgram(freshState({ programs: new Set([4]) }))).toBe(4);
    expect(singleProgram(freshState({ programs: new Set([4, 5]) }))).toBeNull();
    expect(singleProgram(freshState())).toBeNull();
  });
  it('shows the id fields picked, else the one selected program id', () => {
    const launch = grid23;
    expect(pidFieldsShown(freshState({ launch, programs: new Set([5]) }))).toEqual([1, 2, 0]);
    expect(pidFieldsShown(freshState({ launch, programs: new Set([1, 3]), pidFields: [1, null] }))).toEqual([1, null]);
    // the fields were cleared by a chip click (programs null): the fields go with them
    expect(pidFieldsShown(freshState({ launch, programs: null, pidFields: [1, null] }))).toBeNull();
  });
  it('matches program ids against the fields, null for any', () => {
    expect(Array.from(programsMatching(grid23 as never, [1, null])!)).toEqual([1, 3, 5]);
    expect(Array.from(programsMatching(grid23 as never, [null, 2])!)).toEqual([4, 5]);
    expect(programsMatching(grid23 as never, [2, null])).toBeNull(); // x < 2
  });
  it('toggles the selection like the chips do', () => {
    const s = (...p: number[]) => new Set(p);
    expect(toggledPrograms(s(1, 2), null, false)).toBeNull(); // "all"
    expect(Array.from(toggledPrograms(s(1, 2), 3, false)!)).toEqual([3]);
    expect(toggledPrograms(s(3), 3, false)).toBeNull(); // the only one again: all
    expect(Array.from(toggledPrograms(s(1, 2), 3, true)!)).toEqual([1, 2, 3]);
    expect(Array.from(toggledPrograms(s(1, 2), 2, true)!)).toEqual([1]);
    expect(toggledPrograms(s(2), 2, true)).toBeNull();
    expect(Array.from(toggledPrograms(null, 2, true)!)).toEqual([2]);
  });
});

describe('kernels and launches', () => {
  const ov = loaded('oob', 0).overview as never as { kernels: { name: string; file: string }[] };
  const kernels = ov.kernels;
  it('finds a kernel by name, in its file when there is one there', () => {
    const twins = [
      { name: 'k', file: '/a.py' },
      { name: 'k', file: '/b.py' },
    ];
    expect(findKernel(twins as never, 'k', '/b.py')).toBe(twins[1]);
    expect(findKernel(twins as never, 'k', '/c.py')).toBe(twins[0]);
    expect(findKernel(twins as never, 'k', null)).toBe(twins[0]);
    expect(findKernel(twins as never, 'x', '/a.py')).toBeUndefined();
  });
  it('shows the kernel asked for, else the saved one, else the one shown, else the first launched', () => {
    const names = (st: unknown, saved: unknown) => kernelToShow(st as never, kernels as never, saved as never).name;
    const shown = kernels[2];
    expect(names(freshState({ pendingFollow: { kernel: 'shift_kernel', file: OOB, line: 0 } }), null)).toBe(
      'shift_kernel',
    );
    expect(names(freshState({ kernel: shown }), { kernel: 'shift_kernel' })).toBe('shift_kernel');
    expect(names(freshState({ kernel: shown }), null)).toBe('rowsum_kernel');
    expect(names(freshState(), { kernel: 'gone_kernel' })).toBe('scale_kernel');
    const unlaunched = [{ name: 'a', launches: [] }, kernels[1]];
    expect(kernelToShow(freshState(), unlaunched as never, null).name).toBe('shift_kernel');
  });
  it('keeps the saved launch, or the one shown across a refresh, unless a line was asked for', () => {
    const k = loaded('vector_add', 1).kernel;
    const li = (k as never as { launches: unknown[] }).launches[1];
    expect(launchToShow(freshState(), k as never, { kernel: 'add_kernel', launch: 1 })).toBe(1);
    expect(launchToShow(freshState(), k as never, { kernel: 'other', launch: 1 })).toBeNull();
    expect(launchToShow(freshState({ kernel: k, launchInfo: li }), k as never, null)).toBe(1);
    const asked = freshState({ kernel: k, launchInfo: li, pendingFollow: { file: VA, line: 12 } });
    expect(launchToShow(asked, k as never, null)).toBeNull();
  });
  it('knows the kernel whose body the cursor is in, and the launch on the cursor line', () => {
    const st = freshState({ overview: ov });
    expect(kernelForCursor(st, OOB, 12)?.name).toBe('scale_kernel');
    expect(kernelForCursor(st, OOB, 31)?.name).toBe('shift_kernel');
    expect(kernelForCursor(st, OOB, 60)?.name).toBe('rowsum_kernel');
    expect(kernelForCursor(st, OOB, 66)).toBeNull(); // the launches: past every kernel
    expect(kernelForCursor(st, OOB, 3)).toBeNull(); // above the first
    expect(kernelForCursor(st, VA, 12)).toBeNull();
    expect(launchAt(st, OOB, 68)).toMatchObject({ kernel: { name: 'shift_kernel' }, launch: { index: 1 } });
    expect(launchAt(st, OOB, 69)).toBeNull();
  });
});

describe('cells and slices', () => {
  it('reveals the followed line first, touched before out of bounds before masked, selected programs first', () => {
    const site = (line: number) => ({ id: line, file: VA, line, op: 'tl.load' });
    const hits = [
      { site: site(13), how: 'touched', programs: [0] },
      { site: site(12), how: 'masked', programs: [1] },
      { site: site(12), how: 'oob', programs: [0] },
    ];
    const follow = { file: VA, line: 12 };
    expect(revealTarget(freshState({ follow }), hits as never)).toBe(hits[2].site); // out of bounds
    expect(revealTarget(freshState({ follow, programs: new Set([1]) }), hits as never)).toBe(hits[1].site);
    expect(revealTarget(freshState(), hits as never)).toBe(hits[0].site);
    expect(revealTarget(freshState(), [])).toBeNull();
  });
  it('shows up to 16 slices of the last leading dim, for outer indices kept in range', () => {
    const tm = { name: 't', meta: { shape: [3, 40, 4, 5] } } as never;
    expect(sliceSpec(freshState(), tm)).toEqual({ lead: [3, 40], inner: 40, outer: [0], first: 0, count: 16, base: 0 });
    const saved = freshState({ views: { t: { outer: [2], first: 30 } } });
    expect(sliceSpec(saved, tm)).toEqual({ lead: [3, 40], inner: 40, outer: [2], first: 30, count: 10, base: 80 });
    const wild = freshState({ views: { t: { outer: [9], first: 99 } } });
    expect(sliceSpec(wild, tm)).toMatchObject({ outer: [2], first: 39, count: 1 });
    expect(MAX_SLICES).toBe(16);
  });
  it('rebuilds the Performance panel per launch, GPU and load', () => {
    const st = freshState({ launchInfo: { index: 3 }, gpu: 'a100' });
    expect(perfKey(st, 7)).toBe('3/a100/7');
    expect(perfKey(freshState(), 1)).toBe('/h100/1');
  });
});
