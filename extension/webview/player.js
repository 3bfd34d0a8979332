// The Iteration slider's state kept valid, and its play button: stepping through the followed
// line's loop iterations, one per PLAY_MS, until paused or until the line has no loop any more.

import { clampedIteration, followedIterations } from './derive.js';
import { updateIteration } from './panels.js';
import * as store from './store.js';

const { state } = store;
const PLAY_MS = 700;

/**
 * @param {import('./panels.js').Tools} tools
 * @param {() => void} render  the controller's render of the page
 */
export function createPlayer(tools, render) {
  /** Before each render: the iteration exists on the followed line (which may just have changed). */
  function clamp() {
    const n = followedIterations(state);
    store.setIteration(clampedIteration(state.iteration, n));
    if (n <= 1) stop();
    updateIteration(tools, n, state.iteration, state.playing !== null);
  }

  function stop() {
    if (state.playing !== null) clearInterval(state.playing);
    store.setPlaying(null);
  }

  function toggle() {
    if (state.playing !== null) {
      stop();
      clamp();
      return;
    }
    if (followedIterations(state) <= 1) return;
    store.setPlaying(
      setInterval(() => {
        const m = followedIterations(state);
        if (m <= 1 || !state.launch) {
          stop();
          return;
        }
        store.setIteration(state.iteration === null ? 0 : (state.iteration + 1) % m);
        render();
      }, PLAY_MS),
    );
    if (state.iteration === null) store.setIteration(0);
    render();
  }

  return { clamp, stop, toggle };
}
