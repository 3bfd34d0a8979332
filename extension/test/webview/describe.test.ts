// The words the access-map page shows for its state (extension/webview/describe.js), on the page's
// fixtures laid out and rasterised as the page does it.
import { describe, expect, it } from 'vitest';
import { followTest, launchModel, placesOf, sliceSpec } from '../../webview/derive.js';
import { placeCell, placeFull, placeName } from '../../webview/ui.js';
import {
  cardText,
  describeCell,
  fmtNum,
  formatValue,
  headerText,
  kernelLabel,
  launchLabel,
  legendItems,
  lineLabel,
  noKernelsMessage,
  sliceNote,
} from '../../webview/describe.js';
import { makeLayout } from '../../webview/layout.js';
import { accessesAtIteration } from '../../webview/model.js';
import { rasterize } from '../../webview/raster.js';
import { freshState, loaded } from './fixtures';

const VA = '/work/k/vector_add.py';
const OOB = '/work/k/oob.py';

/** Tensor `t` of a loaded launch, laid out and rasterised for the state (as view-tensors.js render). */
function drawn(st: never, t: number) {
  const { launch, programs, iteration } = st as {
    launch: { tensors: Record<string, never>[] };
    programs: Set<number> | null;
    iteration: number | null;
  };
  const tm = launch.tensors[t] as Record<string, never>;
  const layout = makeLayout(tm.meta, tm.view, tm.extent);
  const isFollowed = followTest(st);
  const sites = tm.sites as Map<number, { file: string; line: number }>;
  const followedIds = new Set(
    Array.from(sites.values())
      .filter(isFollowed)
      .map((s) => (s as { id: number }).id),
  );
  const raster = rasterize(
    layout,
    accessesAtIteration(tm as never, iteration, isFollowed),
    (id: number) => followedIds.has(id),
    programs ? (p: number) => programs.has(p) : () => true,
  );
  return { ...tm, layout, raster };
}

describe('pickers and header', () => {
  it('labels kernels, launches and an overview without launches', () => {
    const { kernel, launchInfo } = loaded('vector_add', 1);
    expect(kernelLabel(kernel as never)).toBe('add_kernel  (vector_add.py:8)');
    expect(kernelLabel({ ...kernel, launches: [] } as never)).toBe('add_kernel  (vector_add.py:8) — not launched');
    expect(launchLabel(launchInfo as never)).toBe('launch 1: grid 4 — vector_add.py:29');
    expect(launchLabel({ index: 2, grid: [4, 3, 1], file: '/w/run.py', line: 7 } as never)).toBe(
      'launch 2: grid 4×3 — run.py:7',
    );
    expect(noKernelsMessage({ status: 'timeout' } as never)).toBe('No kernel launches recorded (timeout).');
    expect(noKernelsMessage({ status: 'ok' } as never)).toBe('No kernel launches recorded for this file.');
    expect(noKernelsMessage(null)).toBe('No kernel launches recorded for this file.');
  });
  it('names the followed line, with its file when it is not the kernel file', () => {
    const base = loaded('vector_add', 0);
    const st = freshState({ ...base, follow: { file: VA, line: 12 } });
    const L = base.launch.lines.get(`${VA}\n12`);
    expect(lineLabel(st, L, true)).toBe('line 12: tl.load(x_ptr …)');
    const elsewhere = { ...L, file: '/w/helpers.py' };
    expect(lineLabel(st, elsewhere as never, true)).toBe('helpers.py:12: tl.load(x_ptr …)');
    expect(lineLabel(st, elsewhere as never, false)).toBe('line 12: tl.load(x_ptr …)');
    expect(headerText(st)).toEqual({
      follow: 'following line 12: tl.load(x_ptr …)',
      lineKey: `${VA}\n12`,
      cursorNote: '',
    });
  });
  it('names the lines of a notebook by cell where the host sends names (lineNames), everywhere a line is named', () => {
    const base = loaded('vector_add', 0);
    // vector_add.py as if it were the script of a notebook: lines 8..15 are cell 3 and 16..40 cell 5
    const lineNames = [
      { file: VA, first: 8, last: 15, name: 'cell 3' },
      { file: VA, first: 16, last: 40, name: 'cell 5' },
    ];
    const st = freshState({
      ...base,
      overview: { file: VA, status: 'ok', kernels: [], files: [VA], lineNames },
      follow: { file: VA, line: 12 },
      cursor: { file: VA, line: 20 },
    });
    const places = placesOf(st);
    const L = base.launch.lines.get(`${VA}\n12`);
    expect(lineLabel(st, L, true)).toBe('cell 3, line 5: tl.load(x_ptr …)');
    expect(headerText(st).cursorNote).toBe('(cursor on cell 5, line 5: no memory access there)');
    expect(kernelLabel(base.kernel as never, places)).toBe('add_kernel  (vector_add.py, cell 3, line 1)');
    expect(launchLabel(base.launchInfo as never, places)).toMatch(
      /^launch 0: grid .* — vector_add\.py, cell 5, line \d+$/,
    );
    // a table's line column, a line outside every named range, another file (its own numbers)
    expect([placeCell(places, VA, 12), placeCell(places, VA, 41), placeCell(places, '/w/helpers.py', 3)]).toEqual([
      'cell 3:5',
      '41',
      'helpers.py:3',
    ]);
    expect([placeName(places, VA, 7), placeName(places, '/w/helpers.py', 12, false)]).toEqual(['line 7', 'line 12']);
    expect(placeFull(places, VA, 40)).toBe('vector_add.py, cell 5, line 25');
    // without names (a file, or the browser viewer): lines by number as before
    expect(placeName(placesOf(freshState(base)), VA, 12)).toBe('line 12');
  });
  it('notes a cursor on a line without memory access, and a launch without any', () => {
    const base = loaded('vector_add', 0);
    const follow = { file: VA, line: 12 };
    expect(headerText(freshState({ ...base, follow, cursor: { file: VA, line: 20 } })).cursorNote).toBe(
      '(cursor on line 20: no memory access there)',
    );
    expect(headerText(freshState({ ...base, follow, cursor: { file: VA, line: 12 } })).cursorNote).toBe('');
    expect(headerText(freshState({ ...base, follow: null }))).toEqual({
      follow: 'no line followed',
      lineKey: null,
      cursorNote: '',
    });
    expect(headerText(freshState()).follow).toBe('no memory accesses recorded in this launch');
  });
  it('lists the legend for programs coloured apart, or for the followed access kinds', () => {
    const base = loaded('vector_add', 0);
    const kinds = (st: never) => legendItems(st).map((i: { cls: string }) => i.cls);
    expect(kinds(freshState(base)).slice(0, 2)).toEqual(['tl-sw-programs', 'tl-sw-multi']);
    for (const [k, t] of base.launch.tensors.entries()) t.followKind = ['load', 'load', 'store'][k];
    expect(kinds(freshState({ ...base, programs: new Set([0]) }))).toEqual([
      'tl-sw-follow-load',
      'tl-sw-follow-store',
      'tl-sw-other',
      'tl-sw-masked',
      'tl-sw-oob',
      'tl-sw-elem',
      'tl-sw-band',
    ]);
  });
});

describe('tensor cards', () => {
  it('counts what the followed line touched and its masked-off lanes', () => {
    const st = freshState({ ...loaded('vector_add', 1), follow: { file: VA, line: 12 } });
    const x = drawn(st, 0);
    expect(cardText(st, x.raster.counts, x.layout, undefined)).toEqual({
      status: 'line 12: 200 elements touched, 56 masked-off lane addresses · 7 rows of 32',
      oob: null,
    });
    const other = freshState({ ...loaded('vector_add', 1), follow: { file: VA, line: 13 }, iteration: 0 });
    const x2 = drawn(other, 0);
    const geom = { x: { down: 1 }, y: { down: 4 } };
    expect(cardText(other, x2.raster.counts, x2.layout, geom as never).status).toBe(
      'not accessed on line 13 · iteration 0 · other lines: 200 elements touched · 7 rows of 32 · 1 pixel = 4×1 elements',
    );
  });
  it('sums the out-of-bounds addresses of the followed and the other lines', () => {
    const st = freshState({ ...loaded('oob', 0), follow: { file: OOB, line: 12 } });
    const x = drawn(st, 0);
    expect(cardText(st, x.raster.counts, x.layout, undefined).oob).toBe(
      '⚠ out of bounds — line 12: 24 out-of-bounds addresses (24 past the end)',
    );
    const y = freshState({ ...loaded('oob', 0), follow: { file: OOB, line: 13 } });
    const x3 = drawn(y, 0);
    expect(cardText(y, x3.raster.counts, x3.layout, undefined).oob).toBe(
      '⚠ out of bounds — other lines: 24 (24 past the end)',
    );
  });
  it('says which slices of an N-D tensor are shown', () => {
    const tm = { name: 't', meta: { shape: [3, 40, 4, 5] } } as never;
    const sp = sliceSpec(freshState(), tm);
    expect(sliceNote(tm, sp, 16)).toBe(
      '4-D: slices t[0, 0:16, :, :] of 40 along dim 1 (16 at a time: pick where they start)',
    );
    const few = { name: 'a', meta: { shape: [3, 4, 8] } } as never;
    expect(sliceNote(few, sliceSpec(freshState(), few), 16)).toBe('3-D: slices a[0:3, :, :] of 3 along dim 0');
  });
});

describe('tooltip', () => {
  it('describes an element: its index, the value line, who touched it, where a click goes', () => {
    const st = freshState({ ...loaded('vector_add', 1), follow: { file: VA, line: 12 } });
    const x = drawn(st, 0);
    const d = describeCell(st, x as never, x.layout.indexToCell(195));
    expect(d.info).toMatchObject({ kind: 'element', index: 195 });
    expect(d.lines).toEqual([
      { text: 'x_ptr[195]', cls: 'tl-tip-title' },
      { text: 'value: …', cls: 'tl-tip-value' },
      { text: 'line 12 tl.load: program 3', cls: 'tl-tip-access tl-tip-touched' },
      { text: 'click: go to line 12', cls: 'tl-tip-hint' },
    ]);
  });
  it('describes an address past the end: how far, and the masked-off lanes there', () => {
    const st = freshState({ ...loaded('vector_add', 1), follow: { file: VA, line: 12 } });
    const x = drawn(st, 0);
    const cell = x.layout.placeOffset(210).cell;
    const d = describeCell(st, x as never, cell);
    expect(d.lines).toEqual([
      { text: 'x_ptr: out of bounds', cls: 'tl-tip-title' },
      { text: 'offset 210 (11 past the end)', cls: 'tl-tip-dim' },
      { text: 'line 12 tl.load: masked-off lane of program 3', cls: 'tl-tip-access tl-tip-masked' },
      { text: 'click: go to line 12', cls: 'tl-tip-hint' },
    ]);
    expect(d.hits.map((h: { how: string; programs: number[] }) => [h.how, h.programs])).toEqual([['masked', [3]]]);
  });
  it('names the per-dim index of a 2-D element, "all programs", and nothing to click for an untouched cell', () => {
    // w[2, 3] read whole by each of 3 programs (a broadcast), on line 5 of another file than the kernel's
    const li = { index: 0, grid: [3, 1, 1], file: '/w/run.py', line: 9, programs: 3 };
    const all = [0, 1, 2].map((p) => ({
      site: 0,
      program: [p, 0, 0],
      touched: { runs: [0, 5] },
      masked: null,
      oob: null,
    }));
    const map = {
      tensor: { index: 0, name: 'w', shape: [2, 3], strides: [3, 1], dtype: 'float32', numel: 6 },
      sites: [{ id: 0, file: '/w/lib.py', line: 5, kind: 'load', op: 'tl.load' }],
      accesses: all,
    };
    const launch = launchModel(li as never, [map] as never, {});
    const st = freshState({ launch, kernel: { name: 'k', file: '/w/k.py' }, follow: { file: '/w/lib.py', line: 5 } });
    const w = drawn(st, 0);
    const d = describeCell(st, w as never, w.layout.indexToCell(4));
    expect(d.lines).toEqual([
      { text: 'w[1, 1]', cls: 'tl-tip-title' },
      { text: 'flat index 4, offset 4', cls: 'tl-tip-dim' },
      { text: 'value: …', cls: 'tl-tip-value' },
      { text: 'lib.py:5 tl.load: all programs', cls: 'tl-tip-access tl-tip-touched' },
      { text: 'click: go to lib.py:5', cls: 'tl-tip-hint' },
    ]);
    const untouched = describeCell(st, w as never, w.layout.indexToCell(5));
    expect(untouched.hits).toEqual([]);
    expect(untouched.lines.slice(-1)).toEqual([{ text: 'not accessed by any program', cls: 'tl-tip-dim' }]);
  });
  it('formats values and numbers', () => {
    expect(formatValue(3, 'int32')).toBe('3');
    expect(formatValue(0.1 + 0.2, 'float32')).toBe('0.3');
    expect(formatValue(2.5, 'int8')).toBe('2.5');
    expect(formatValue(123456789.123, 'float64')).toBe('123457000');
    expect(formatValue(null, 'float32')).toBe('not kept');
    expect(formatValue('nan', 'float32')).toBe('nan');
    expect(fmtNum(1 / 3)).toBe('0.3333');
    expect(fmtNum('inf')).toBe('inf');
  });
});
