// The page's one interface to whoever hosts it (PROTOCOL.md has the wire formats):
//
//   host.request(method, params) -> Promise<result>   methods: "kernels", "accessMap", "values"
//   host.onEvent(cb)               cb({type: "cursor"|"refresh"|"select", ...})
//   host.reveal(file, line)        ask the host to show a source line
//   host.getState() / setState(s)  persisted view selection (kernel, launch, line, programs)
//   host.ready()                   tell the host the page is listening
//   host.kind                      "vscode" | "http"

/** @typedef {import('../src/viewerProtocol').ViewerMethod} ViewerMethod */
/**
 * @template {ViewerMethod} M
 * @typedef {import('../src/viewerProtocol').ViewerParams<M>} ViewerParams
 */
/**
 * @template {ViewerMethod} M
 * @typedef {import('../src/viewerProtocol').ViewerResult<M>} ViewerResult
 */
/**
 * Host -> page events (PROTOCOL.md). Their fields come from outside: the page converts them.
 * @typedef {{type: 'cursor', file?: string, line?: number}} CursorEvent
 * @typedef {{type: 'refresh'}} RefreshEvent
 * @typedef {{type: 'select', kernel?: string, file?: string, line?: number}} SelectEvent
 * @typedef {CursorEvent | RefreshEvent | SelectEvent} HostEvent
 */
/**
 * @typedef {object} Host
 * @property {'vscode' | 'http'} kind
 * @property {<M extends ViewerMethod>(method: M, params?: ViewerParams<M>) => Promise<ViewerResult<M>>} request
 * @property {(cb: (ev: HostEvent) => void) => void} onEvent
 * @property {(file: string, line: number) => void} reveal
 * @property {() => unknown} getState  what setState kept (anything: an older page may have written it)
 * @property {(s: unknown) => void} setState
 * @property {() => void} ready
 */
/**
 * What acquireVsCodeApi() gives a webview.
 * @typedef {{postMessage(m: unknown): void, getState(): unknown, setState(s: unknown): void}} VsCodeApi
 */

const EVENT_TYPES = new Set(['cursor', 'refresh', 'select']);

/** @param {unknown} e */
function errorOf(e) {
  if (e instanceof Error) return e;
  if (e && typeof e === 'object' && 'message' in e && typeof e.message === 'string') return new Error(e.message);
  return new Error(typeof e === 'string' ? e : 'request failed');
}

/**
 * VS Code webview: postMessage with request ids.
 * @param {VsCodeApi} api
 * @param {Pick<Window, 'addEventListener'>} [win]
 * @returns {Host}
 */
export function vscodeHost(api, win = globalThis) {
  let nextId = 1;
  /** @type {Map<number, {resolve: (result: unknown) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  /** @type {((ev: HostEvent) => void)[]} */
  const listeners = [];
  win.addEventListener('message', (ev) => {
    const m = ev.data;
    if (!m || typeof m !== 'object') return;
    if (m.type === 'response') {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error !== undefined && m.error !== null) p.reject(errorOf(m.error));
      else p.resolve(m.result);
    } else if (EVENT_TYPES.has(m.type)) {
      for (const cb of listeners) cb(m);
    }
  });
  return {
    kind: 'vscode',
    request(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: /** @type {(result: unknown) => void} */ (resolve), reject });
        api.postMessage({ type: 'request', id, method, params });
      });
    },
    onEvent(cb) {
      listeners.push(cb);
    },
    reveal(file, line) {
      api.postMessage({ type: 'reveal', file, line });
    },
    getState() {
      return api.getState() || null;
    },
    setState(s) {
      api.setState(s);
    },
    ready() {
      api.postMessage({ type: 'ready' });
    },
  };
}

/**
 * Standalone browser viewer: POST api/<method>, events from the EventSource api/events.
 * @param {Pick<typeof globalThis, 'fetch' | 'EventSource' | 'localStorage'>} [win]
 * @param {string} [base]
 * @returns {Host}
 */
export function httpHost(win = globalThis, base = 'api/') {
  /** @type {((ev: HostEvent) => void)[]} */
  const listeners = [];
  const STORE = 'triton-lens.viewer';
  /** @type {EventSource | null} */
  let source = null;
  /**
   * @param {string} path
   * @param {unknown} body
   */
  async function post(path, body) {
    const res = await win.fetch(base + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    let data;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (!res.ok) throw errorOf((data && data.error) || `${path}: HTTP ${res.status}`);
    return data;
  }
  return {
    kind: 'http',
    request(method, params = {}) {
      return post(method, params);
    },
    onEvent(cb) {
      listeners.push(cb);
      if (source || typeof win.EventSource !== 'function') return;
      source = new win.EventSource(base + 'events');
      source.onmessage = (ev) => {
        let m;
        try {
          m = JSON.parse(ev.data);
        } catch {
          return;
        }
        if (m && EVENT_TYPES.has(m.type)) for (const l of listeners) l(m);
      };
    },
    reveal(file, line) {
      post('reveal', { file, line }).catch(() => {});
    },
    getState() {
      try {
        // nothing kept: getItem's null parses as null
        return JSON.parse(/** @type {string} */ (win.localStorage.getItem(STORE)));
      } catch {
        return null;
      }
    },
    setState(s) {
      try {
        win.localStorage.setItem(STORE, JSON.stringify(s));
      } catch {
        /* storage off */
      }
    },
    ready() {},
  };
}

/**
 * Pick the implementation: VS Code when its API is there, else HTTP.
 * @param {typeof globalThis & {acquireVsCodeApi?: () => VsCodeApi}} [win]
 * @returns {Host}
 */
export function createHost(win = globalThis) {
  if (typeof win.acquireVsCodeApi === 'function') return vscodeHost(win.acquireVsCodeApi(), win);
  return httpHost(win);
}
