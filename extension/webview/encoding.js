// ENC element sets (docs/architecture.md, "Viewer data") decoded into typed arrays.
//
//   null                         -> empty
//   {"runs": [s0, n0, s1, n1…]}  -> sorted disjoint runs [s, s + n)
//   {"lo": L, "n": N, "bits": b64} -> bitmap over [L, L + N), bit i = (byte i>>3 >> (i&7)) & 1
//
// A decoded set is {kind: 0|1|2, ...}; nothing here ever makes one JS value per element.

/** @typedef {import('../src/viewerProtocol').Enc} Enc */
/**
 * A decoded element set. min/max: its smallest and largest member (max < min when empty).
 * @typedef {{kind: 0, count: number, min: number, max: number}} EmptySet
 * @typedef {{kind: 1, starts: Float64Array, lens: Float64Array, count: number, min: number, max: number}} RunsSet
 * @typedef {{kind: 2, lo: number, n: number, bytes: Uint8Array, count: number, min: number, max: number}} BitsSet
 * @typedef {EmptySet | RunsSet | BitsSet} EncSet
 */

export const EMPTY = /** @type {const} */ (0);
export const RUNS = /** @type {const} */ (1);
export const BITS = /** @type {const} */ (2);

/** @type {EmptySet} */
const EMPTY_SET = Object.freeze({ kind: EMPTY, count: 0, min: 0, max: -1 });

/** @param {string} s */
function b64ToBytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const POPCOUNT = new Uint8Array(256);
for (let i = 1; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1];

/**
 * Decode one ENC value. Throws on a malformed value.
 * @param {Enc | undefined} enc
 * @returns {EncSet}
 */
export function decodeEnc(enc) {
  if (enc === null || enc === undefined) return EMPTY_SET;
  // The host's JSON, checked here rather than trusted to be one of the two forms.
  const e = /** @type {{runs?: unknown, lo?: unknown, n?: unknown, bits?: unknown}} */ (enc);
  if (Array.isArray(e.runs)) {
    const r = e.runs;
    if (r.length % 2) throw new Error('ENC runs: odd length');
    const n = r.length / 2;
    if (n === 0) return EMPTY_SET;
    // Float64: offsets may be negative or beyond 2^31 (padding, far out-of-bounds addresses).
    const starts = new Float64Array(n);
    const lens = new Float64Array(n);
    let count = 0;
    for (let k = 0; k < n; k++) {
      starts[k] = r[2 * k];
      lens[k] = r[2 * k + 1];
      count += lens[k];
    }
    return { kind: RUNS, starts, lens, count, min: starts[0], max: starts[n - 1] + lens[n - 1] - 1 };
  }
  if (typeof e.bits === 'string') {
    const bytes = b64ToBytes(e.bits);
    const lo = Number(e.lo);
    const n = Number(e.n);
    let count = 0;
    for (let i = 0; i < bytes.length; i++) count += POPCOUNT[bytes[i]];
    if (count === 0) return EMPTY_SET;
    // min/max: first and last set bit.
    let first = 0;
    while (!((bytes[first >> 3] >> (first & 7)) & 1)) first++;
    let last = n - 1;
    while (last > first && !((bytes[last >> 3] >> (last & 7)) & 1)) last--;
    return { kind: BITS, lo, n, bytes, count, min: lo + first, max: lo + last };
  }
  throw new Error('ENC: unknown element-set form');
}

/**
 * Is element index / offset x in the set? O(log runs) or O(1).
 * @param {EncSet} set
 * @param {number} x
 */
export function setHas(set, x) {
  if (set.kind === EMPTY || x < set.min || x > set.max) return false;
  if (set.kind === BITS) {
    const i = x - set.lo;
    return i >= 0 && i < set.n && ((set.bytes[i >> 3] >> (i & 7)) & 1) === 1;
  }
  const s = set.starts;
  let lo = 0;
  let hi = s.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (s[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return x >= s[lo] && x < s[lo] + set.lens[lo];
}

/**
 * Call fn(start, length) for each maximal run of the set, in increasing order.
 * @param {EncSet} set
 * @param {(start: number, length: number) => void} fn
 */
export function forEachRun(set, fn) {
  if (set.kind === RUNS) {
    const { starts, lens } = set;
    for (let k = 0; k < starts.length; k++) fn(starts[k], lens[k]);
  } else if (set.kind === BITS) {
    const { bytes, n, lo } = set;
    let i = 0;
    while (i < n) {
      const b = bytes[i >> 3];
      if (b === 0 && (i & 7) === 0) {
        i += 8;
        continue;
      }
      if (!((b >> (i & 7)) & 1)) {
        i++;
        continue;
      }
      const start = i;
      while (i < n && (bytes[i >> 3] >> (i & 7)) & 1) i++;
      fn(lo + start, i - start);
    }
  }
}

/**
 * Number of set members inside [lo, hi).
 * @param {EncSet} set
 * @param {number} lo
 * @param {number} hi
 */
export function countIn(set, lo, hi) {
  let c = 0;
  forEachRun(set, (s, n) => {
    const a = Math.max(s, lo);
    const b = Math.min(s + n, hi);
    if (b > a) c += b - a;
  });
  return c;
}

/**
 * Encode sorted distinct integers as an ENC runs object (used by tests and the benchmark).
 * @param {number[]} sortedValues
 * @returns {Enc}
 */
export function encodeRuns(sortedValues) {
  /** @type {number[]} */
  const runs = [];
  for (let i = 0; i < sortedValues.length;) {
    let j = i + 1;
    while (j < sortedValues.length && sortedValues[j] === sortedValues[j - 1] + 1) j++;
    runs.push(sortedValues[i], j - i);
    i = j;
  }
  return runs.length ? { runs } : null;
}
