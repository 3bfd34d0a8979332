// The page's pure modules (ENC decoding, layout, rasterising, pixel composition) under Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEnc, setHas, forEachRun, countIn, encodeRuns, EMPTY } from '../../extension/webview/encoding.js';
import { makeLayout, defaultWrap } from '../../extension/webview/layout.js';
import {
  rasterize,
  offsetExtent,
  F_FOLLOW,
  F_OTHER,
  F_OOB_F,
  F_MASK_F,
  F_MULTI,
} from '../../extension/webview/raster.js';
import { composePixels, fitGeometry, packRGBA } from '../../extension/webview/draw.js';

const runsOf = (set) => {
  const r = [];
  forEachRun(set, (s, n) => r.push([s, n]));
  return r;
};

test('ENC: null, runs and little-endian bitmaps decode to the same sets', () => {
  assert.equal(decodeEnc(null).kind, EMPTY);
  const r = decodeEnc({ runs: [-3, 2, 10, 5] });
  assert.equal(r.count, 7);
  assert.deepEqual([r.min, r.max], [-3, 14]);
  assert.deepEqual(runsOf(r), [
    [-3, 2],
    [10, 5],
  ]);
  assert.ok(setHas(r, -2) && setHas(r, 10) && setHas(r, 14));
  assert.ok(!setHas(r, -1) && !setHas(r, 9) && !setHas(r, 15));
  // bits over [100, 100 + 20): bytes 0b00000101, 0b11110000, 0b00001000 -> 100, 102, 112..115, 119
  const bytes = Buffer.from([0b00000101, 0b11110000, 0b00001000]).toString('base64');
  const b = decodeEnc({ lo: 100, n: 20, bits: bytes });
  assert.equal(b.count, 7);
  assert.deepEqual([b.min, b.max], [100, 119]);
  assert.deepEqual(runsOf(b), [
    [100, 1],
    [102, 1],
    [112, 4],
    [119, 1],
  ]);
  assert.ok(setHas(b, 113) && !setHas(b, 101) && !setHas(b, 120) && !setHas(b, 99));
  assert.equal(countIn(b, 101, 114), 3);
  assert.deepEqual(encodeRuns([1, 2, 3, 7, 9, 10]), { runs: [1, 3, 7, 1, 9, 2] });
  assert.throws(() => decodeEnc({ runs: [1] }));
  assert.throws(() => decodeEnc({ what: 1 }));
});

test('layout: 1-D wrap, past-the-end and before-the-start offsets in bands', () => {
  assert.equal(defaultWrap(128), 128);
  assert.equal(defaultWrap(1000), 64);
  assert.equal(defaultWrap(1 << 20), 1024);
  const t = { shape: [1000], strides: [1] };
  const lay = makeLayout(t, {}, { minOffset: -5, maxOffset: 1100, hasNonElement: true });
  assert.deepEqual([lay.C, lay.R, lay.Bt, lay.Bb], [64, 16, 1, 2]);
  assert.equal(lay.placeOffset(70).index, 70);
  const past = lay.placeOffset(1010); // the tail of the last row
  assert.equal(past.where, 'past');
  assert.equal(past.cell, (1 + 15) * 64 + (1010 - 960));
  assert.equal(lay.placeOffset(1100).cell, (1 + 17) * 64 + (1100 - 1088));
  assert.equal(lay.placeOffset(-1).cell, 63); // row above, last column
  assert.equal(lay.placeOffset(5000).cell, -1); // beyond the band
  const info = lay.cellInfo(lay.placeOffset(1010).cell);
  assert.deepEqual([info.kind, info.offset, info.where], ['tail', 1010, 'past']);
  assert.equal(lay.cellInfo(lay.indexToCell(999)).index, 999);
});

test('layout: a strided view places padding offsets right of the grid; a transposed view uses a lookup', () => {
  // x = buf[:, :100] of a 32 x 128 buffer
  const v = makeLayout(
    { shape: [32, 100], strides: [128, 1] },
    {},
    { minOffset: 0, maxOffset: 4200, hasNonElement: true },
  );
  assert.equal(v.nested, true);
  assert.equal(v.contiguous, false);
  assert.equal(v.Br, 28);
  assert.equal(v.placeOffset(128 + 5).index, 105);
  const pad = v.placeOffset(128 + 110);
  assert.deepEqual([pad.where, pad.index, pad.cell], ['padding', -1, 1 * v.P + 110]);
  assert.equal(v.cellInfo(pad.cell).offset, 238);
  const below = v.placeOffset(32 * 128 + 3);
  assert.equal(below.where, 'past');
  assert.equal(below.cell, 32 * v.P + 3);
  // a transposed 3 x 4 view of a 4 x 3 buffer: strides (1, 3)
  const tr = makeLayout({ shape: [3, 4], strides: [1, 3] }, {}, { minOffset: 0, maxOffset: 13, hasNonElement: true });
  assert.equal(tr.nested, false);
  assert.equal(tr.placeOffset(1).index, 4); // element [1, 0]
  assert.equal(tr.placeOffset(3).index, 1); // element [0, 1]
  assert.equal(tr.offsetOfIndex(4), 1);
  assert.equal(tr.placeOffset(12).where, 'past');
  assert.notEqual(tr.placeOffset(12).cell, -1);
  // N-D: slices over the leading dims
  const nd = makeLayout({ shape: [2, 3, 4, 5], strides: [60, 20, 5, 1] }, { slice: 4 });
  assert.deepEqual([nd.R, nd.C, nd.nSlices, nd.viewLo], [4, 5, 6, 80]);
  assert.equal(nd.indexToCell(79), -1);
  assert.equal(nd.indexToCell(81), 1);
});

test('rasterize: followed vs other lines, program filter, several programs, oob and masked counts', () => {
  const lay = makeLayout(
    { shape: [16], strides: [1] },
    { wrap: 8 },
    { minOffset: 14, maxOffset: 19, hasNonElement: true },
  );
  const acc = [
    { site: 0, prog: 0, touched: decodeEnc({ runs: [0, 8] }), masked: decodeEnc(null), oob: decodeEnc(null) },
    {
      site: 0,
      prog: 1,
      touched: decodeEnc({ runs: [6, 8] }),
      masked: decodeEnc({ runs: [14, 2] }),
      oob: decodeEnc({ runs: [16, 4] }),
    },
    { site: 1, prog: 0, touched: decodeEnc({ runs: [0, 16] }), masked: decodeEnc(null), oob: decodeEnc(null) },
  ];
  assert.deepEqual(offsetExtent(acc), { minOffset: 14, maxOffset: 19, hasNonElement: true });
  const all = rasterize(
    lay,
    acc,
    (s) => s === 0,
    () => true,
  );
  const f = (i) => all.flags[lay.indexToCell(i)];
  assert.equal(f(0), F_FOLLOW | F_OTHER);
  assert.equal(f(7) & F_MULTI, F_MULTI, 'element 7 is touched by programs 0 and 1');
  assert.equal(all.prog[lay.indexToCell(7)], 0);
  assert.equal(f(14) & (F_FOLLOW | F_MASK_F), F_MASK_F);
  assert.equal(f(15) & F_FOLLOW, 0);
  assert.equal(all.flags[lay.placeOffset(17).cell], F_OOB_F);
  assert.deepEqual(all.counts.oobF, { before: 0, past: 4, padding: 0, hidden: 0 });
  // distinct elements: programs 0 and 1 overlap on 6 and 7 (0..7 and 6..13): 14 elements, not 8 + 8
  assert.equal(all.counts.touchedF, 14);
  assert.equal(all.counts.touchedO, 16);
  // the lanes: each access's active lanes, an element counted once per lane that touched it
  const withLanes = acc.map((a, i) => ({ ...a, active: [8, 12, 16][i] }));
  const lanes = rasterize(
    lay,
    withLanes,
    (s) => s === 0,
    () => true,
  );
  assert.equal(lanes.counts.lanesF, 20);
  assert.equal(lanes.counts.touchedF, 14);
  const p1 = rasterize(
    lay,
    acc,
    (s) => s === 0,
    (p) => p === 1,
  );
  assert.equal(p1.flags[lay.indexToCell(0)], 0);
  assert.equal(p1.flags[lay.indexToCell(7)], F_FOLLOW);
  assert.equal(p1.counts.touchedO, 0);
});

test('fitGeometry: a matrix of many wide rows keeps its aspect; a few wide rows stay readable', () => {
  // 1151 x 8192 (the layer-norm tutorial's size) in 500 px: drawn wide, not stretched to the height allowed
  const big = fitGeometry(8192, 1151, 500, 800);
  assert.equal(big.x.down, big.y.down, `${big.x.down} columns but ${big.y.down} rows per pixel`);
  assert.ok(big.width > big.height * 6, `${big.width} x ${big.height}`);
  // 4 rows of 8192: 14 px rows, as before
  const few = fitGeometry(8192, 4, 500, 800);
  assert.equal(few.y.up, 14);
  assert.equal(few.height, 56);
  // a square matrix is square
  const sq = fitGeometry(1024, 1024, 300, 300);
  assert.equal(sq.width, sq.height);
});

test('composePixels: one followed element among a million survives downsampling', () => {
  const n = 1 << 20;
  const lay = makeLayout({ shape: [1024, 1024], strides: [1024, 1] });
  const acc = [
    {
      site: 0,
      prog: 3,
      touched: decodeEnc({ runs: [512 * 1024 + 700, 1] }),
      masked: decodeEnc(null),
      oob: decodeEnc(null),
    },
    { site: 1, prog: 0, touched: decodeEnc({ runs: [0, n] }), masked: decodeEnc(null), oob: decodeEnc(null) },
  ];
  const r = rasterize(
    lay,
    acc,
    (s) => s === 0,
    () => true,
  );
  const geom = fitGeometry(lay.P, lay.Rt, 300, 300);
  assert.ok(geom.x.down >= 4 && geom.width <= 300 && geom.height <= 300);
  const pal = {
    gap: 1,
    elem: 2,
    band: 3,
    bandStripe: 4,
    follow: packRGBA(0, 0, 255),
    other: 6,
    maskF: 7,
    maskF2: 8,
    maskO: 9,
    maskO2: 10,
    oobF: 11,
    oobO: 12,
    multi: 13,
    progCols: new Uint32Array([20, 21, 22, 23]),
  };
  const dst = new Uint32Array(geom.width * geom.height);
  composePixels(dst, geom, r, { Bt: 0, R: 1024, C: 1024, tailCell: Infinity }, pal, false);
  const hits = [];
  dst.forEach((v, i) => {
    if (v === pal.follow) hits.push(i);
  });
  assert.equal(hits.length, 1);
  const px = hits[0] % geom.width;
  const py = Math.floor(hits[0] / geom.width);
  assert.equal(px, Math.floor(700 / geom.x.down));
  assert.equal(py, Math.floor(512 / geom.y.down));
  assert.equal(dst.filter((v) => v === pal.other).length, dst.length - 1);
  // coloured by program: the pixel takes program 3's colour
  composePixels(dst, geom, r, { Bt: 0, R: 1024, C: 1024, tailCell: Infinity }, pal, true);
  assert.equal(dst[hits[0]], 23);
});
