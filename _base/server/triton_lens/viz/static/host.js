// The standalone viewer's host page: the kernel's source beside the access-map page (an iframe of
// /view, the same page the VS Code view shows). Clicking a source line sends a "cursor" event to
// the page (POST api/cursor -> the server's event stream), as moving the editor cursor does in
// VS Code; the page's "reveal" requests come back here and highlight the line.

const code = document.getElementById('th-code');
const fileSel = document.getElementById('th-file');
const state = { file: null, selected: 0, files: [], kernels: [] };

async function post(path, body) {
  const res = await fetch(`/api/${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}),
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error((data && data.error && data.error.message) || `${path}: HTTP ${res.status}`);
  return data;
}

function basename(p) { const s = String(p || ''); return s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) + 1); }

function lineNode(n) { return code.querySelector(`.th-ln[data-line="${n}"]`); }

function mark(n, cls, scroll) {
  for (const e of code.querySelectorAll(`.${cls}`)) e.classList.remove(cls);
  const e = lineNode(n);
  if (!e) return;
  e.classList.add(cls);
  e.setAttribute('aria-selected', cls === 'th-selected' ? 'true' : e.getAttribute('aria-selected') || 'false');
  if (scroll) e.scrollIntoView({ block: 'center' });
}

async function showFile(file, line, scrollOnly = false) {
  if (state.file !== file) {
    const src = await post('source', { file });
    state.file = file;
    fileSel.value = file;
    const marks = new Map((src.lines || []).map((m) => [m.line, m]));
    const lines = String(src.text || '').replace(/\n$/, '').split('\n');
    const frag = document.createDocumentFragment();
    lines.forEach((text, i) => {
      const n = i + 1;
      const row = document.createElement('div');
      row.className = 'th-ln';
      row.dataset.line = String(n);
      row.setAttribute('role', 'option');
      const m = marks.get(n);
      if (m) {
        for (const k of m.kinds) row.classList.add(`th-${k}`);
        row.title = `${m.kinds.join(' + ')} of ${m.args.join(', ')}`;
      }
      const no = document.createElement('span'); no.className = 'th-no'; no.textContent = String(n);
      const mk = document.createElement('span'); mk.className = 'th-mark';
      const tx = document.createElement('span'); tx.className = 'th-text'; tx.textContent = text || ' ';
      row.append(no, mk, tx);
      frag.append(row);
    });
    code.replaceChildren(frag);
    state.kernels = src.kernels || [];
  }
  if (line && scrollOnly) {
    const e = lineNode(line);
    if (e) e.scrollIntoView({ block: 'start' });
  } else if (line) {
    mark(line, 'th-revealed', true);
  }
}

code.addEventListener('click', (ev) => {
  const row = ev.target.closest('.th-ln');
  if (!row || !state.file) return;
  const line = Number(row.dataset.line);
  state.selected = line;
  mark(line, 'th-selected', false);
  post('cursor', { file: state.file, line }).catch(() => {});
});

fileSel.addEventListener('change', () => { showFile(fileSel.value, 0).catch(showError); });

function showError(e) {
  const d = document.createElement('div');
  d.className = 'th-empty';
  d.textContent = `Could not load the source: ${e.message}`;
  code.replaceChildren(d);
}

async function load() {
  const ov = await post('kernels', {});
  const kernels = (ov && ov.kernels) || [];
  const files = [];
  for (const k of kernels) if (k.file && !files.includes(k.file)) files.push(k.file);
  for (const f of (ov && ov.files) || []) if (!files.includes(f)) files.push(f);
  state.files = files;
  fileSel.replaceChildren(...files.map((f) => {
    const o = document.createElement('option'); o.value = f; o.textContent = basename(f); o.title = f; return o;
  }));
  fileSel.hidden = files.length < 2;
  if (!files.length) {
    const d = document.createElement('div');
    d.className = 'th-empty';
    d.textContent = 'No kernel launches recorded.';
    code.replaceChildren(d);
    state.file = null;
    return;
  }
  const first = kernels.find((k) => (k.launches || []).length) || kernels[0];
  const file = state.file && files.includes(state.file) ? state.file : (first ? first.file : files[0]);
  const same = state.file === file;
  state.file = null; // reload the text: the launches (and so the marked lines) may have changed
  await showFile(file, same ? 0 : (first && first.file === file ? first.line : 0), true);
}

const events = new EventSource('/api/events');
events.onmessage = (ev) => {
  let m;
  try { m = JSON.parse(ev.data); } catch { return; }
  if (m.type === 'reveal' && m.file) {
    (state.files.includes(m.file) ? showFile(m.file, m.line) : Promise.resolve()).catch(showError);
  } else if (m.type === 'refresh') {
    load().catch(showError);
  }
};

load().catch(showError);
