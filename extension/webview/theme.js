// The theme's colours for the views. Palettes are read from CSS variables, which is slow enough to
// keep them per (access kind, program count) until the theme changes (resetPalettes).

import { makePalette } from './draw.js';

/** @typedef {import('./draw.js').Palette} Palette */

/** @type {Map<string, Palette>} */
let palettes = new Map();

/** VS Code's theme class on <body>; outside VS Code, the browser's colour scheme. */
export function isDark() {
  return (
    !document.body.classList.contains('vscode-light') &&
    (document.body.classList.contains('vscode-dark') ||
      document.body.classList.contains('vscode-high-contrast') ||
      !(window.matchMedia && window.matchMedia('(prefers-color-scheme: light)').matches))
  );
}

/**
 * @param {import('./store.js').State} state
 * @param {string} kind  the followed access's kind: load, store, atomic
 */
export function paletteFor(state, kind) {
  const n = state.launch ? state.launch.nPrograms : 1;
  const key = `${kind}:${n}`;
  let p = palettes.get(key);
  if (!p) {
    p = makePalette(getComputedStyle(document.body), kind, n, isDark());
    palettes.set(key, p);
  }
  return p;
}

export function resetPalettes() {
  palettes = new Map();
}

/** @param {import('./draw.js').RGBA} c */
export function cssColor(c) {
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}
