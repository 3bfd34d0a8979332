// The access-map page's one-way flow (the header of extension/webview/viewer.js), checked on its
// source: which module may import which, and that only the store writes the page's state.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = path.resolve(__dirname, '../../webview');
const modules = fs.readdirSync(DIR).filter((f) => f.endsWith('.js'));
const source = (f: string) => fs.readFileSync(path.join(DIR, f), 'utf8');
/** The page's modules that `f` imports (type-only JSDoc imports are not imports). */
const importsOf = (f: string) =>
  Array.from(source(f).matchAll(/^import [^;]*? from '\.\/([\w-]+\.js)';/gms), (m) => m[1]);

const CONTROLLER = ['viewer.js', 'events.js', 'player.js', 'loader.js', 'pointer.js', 'testhook.js', 'host.js'];
const VIEWS = modules.filter((f) => f.startsWith('view-'));
const PURE = ['store.js', 'derive.js', 'describe.js', 'model.js', 'encoding.js', 'layout.js', 'raster.js', 'query.js'];

describe('the page modules', () => {
  it('are the ones the header of viewer.js lists', () => {
    const header = source('viewer.js').split('\nimport ')[0];
    const listed = Array.from(header.matchAll(/\b([\w-]+\.js)\b/g), (m) => m[1]);
    expect(new Set(listed)).toEqual(new Set(modules));
  });
  it('import one way: the entry from nobody, the store from no one it needs, views never the host', () => {
    const bad: string[] = [];
    for (const f of modules) {
      for (const dep of importsOf(f)) {
        if (dep === 'viewer.js') bad.push(`${f} imports the entry point`);
        if (PURE.includes(f) && (CONTROLLER.includes(dep) || VIEWS.includes(dep) || dep === 'theme.js'))
          bad.push(`${f} (model) imports ${dep}`);
        if (f !== 'viewer.js' && VIEWS.includes(f) && CONTROLLER.includes(dep)) bad.push(`${f} (view) imports ${dep}`);
        if (f === 'loader.js' && (VIEWS.includes(dep) || ['ui.js', 'panels.js', 'theme.js'].includes(dep)))
          bad.push(`loader.js imports the view ${dep}`);
      }
    }
    expect(importsOf('store.js')).toEqual([]);
    expect(importsOf('viewer.js')).toContain('store.js');
    expect(bad).toEqual([]);
  });
  it('leave the state to the store: no module but store.js assigns to state, page or hover', () => {
    const writes = /\b(?:state|page|hover)\.[\w.]+\s*(?:[-+*/|&]?=(?!=)|\+\+|--)/g;
    const found = modules
      .filter((f) => f !== 'store.js')
      .flatMap((f) => Array.from(source(f).matchAll(writes), (m) => `${f}: ${m[0]}`));
    expect(found).toEqual([]);
    expect(source('store.js').match(writes)!.length).toBeGreaterThan(10);
  });
});
