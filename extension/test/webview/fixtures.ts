// The page's hand-written viewer data (tests/webview/fixtures) as Node inputs for its pure modules.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { launchModel } from '../../webview/derive.js';
import { initialState } from '../../webview/store.js';

const DIR = path.resolve(__dirname, '../../../tests/webview/fixtures');

export interface Fixture {
  kernels: { kernels: { name: string; launches: { index: number }[] }[] };
  maps: Record<string, unknown>;
}

export function fixture(name: string): Fixture {
  return JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8'));
}

/** A state as the store starts with, with `patch` over it. */
export function freshState(patch: Record<string, unknown> = {}) {
  return { ...initialState(), ...patch } as never;
}

/** Launch `index` of fixture `name` loaded as the page loads it: overview entry, kernel, model. */
export function loaded(name: string, index: number, views: Record<string, unknown> = {}) {
  const fx = fixture(name);
  const kernel = fx.kernels.kernels.find((k) => k.launches.some((l) => l.index === index))!;
  const li = kernel.launches.find((l) => l.index === index)!;
  const maps = Object.keys(fx.maps)
    .filter((k) => k.startsWith(`${index}/`))
    .sort((a, b) => Number(a.split('/')[1]) - Number(b.split('/')[1]))
    .map((k) => fx.maps[k]);
  return { overview: fx.kernels, kernel, launchInfo: li, launch: launchModel(li as never, maps as never, views) };
}
