// The fixture-backed host used by the tests: one pure function that answers the page's requests
// from a fixture object (see fixtures/*.json). It is also stringified into the page to stand in
// for VS Code, so it must not close over anything.

/** Answer `method(params)` from fixture `fix`; throws Error on an unknown launch/tensor. */
export function answer(fix, method, params) {
  params = params || {};
  const key = `${params.launch}/${params.tensor}`;
  if (method === 'kernels') return fix.kernels;
  if (method === 'accessMap') {
    const m = fix.maps[key];
    if (!m) throw new Error(`no tensor ${params.tensor} in launch ${params.launch}`);
    return m;
  }
  if (method === 'values') {
    if (!(key in fix.values)) throw new Error(`no tensor ${params.tensor} in launch ${params.launch}`);
    const spec = fix.values[key];
    const start = params.start | 0;
    const count = params.count | 0;
    const values = [];
    for (let i = start; i < start + count; i++) {
      if (spec === null) values.push(null);
      else if (Array.isArray(spec)) values.push(spec[i] ?? null);
      else if (spec.strings) values.push(spec.strings[i % spec.strings.length]);
      else values.push(i < spec.arange ? i * (spec.scale ?? 1) : null);
    }
    const sampled = fix.extra && fix.extra.sampled && fix.extra.sampled[key];
    return sampled ? { start, values, sampled } : { start, values };
  }
  if (method === 'valueMap' || method === 'dots' || method === 'dotTiles' || method === 'performance') {
    // engine fixtures carry these per launch (dots, performance), per launch/execution (dotTiles) or
    // per launch/tensor/when (valueMap)
    const table = (fix.extra || {})[method];
    const k =
      method === 'valueMap'
        ? `${key}/${params.when === 'before' ? 'before' : 'after'}`
        : method === 'dotTiles'
          ? `${params.launch}/${params.execution}`
          : `${params.launch}`;
    if (!table || !(k in table)) throw new Error(`no ${method} for ${k}`);
    return table[k];
  }
  throw new Error(`unknown method ${method}`);
}
