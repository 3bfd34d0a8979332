import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeDocument, makeEditor, mock, Position, Selection, Uri } from 'vscode';
import { CURSOR_DEBOUNCE_MS, CursorSync } from '../src/cursorSync';

let sync: CursorSync | undefined;
beforeEach(() => {
  mock.reset();
  vi.useFakeTimers();
});
afterEach(() => {
  sync?.dispose();
  vi.useRealTimers();
});

function moveTo(ed: ReturnType<typeof makeEditor>, line: number) {
  ed.selection = new Selection(new Position(line, 0), new Position(line, 0));
  mock.onDidChangeTextEditorSelection.fire({ textEditor: ed });
}

describe('CursorSync', () => {
  it('sends one debounced {type:"cursor", file, line} with a 1-based line', () => {
    const post = vi.fn();
    sync = new CursorSync(() => ({ post }));
    const ed = makeEditor(makeDocument('/w/k.py', ''));
    moveTo(ed, 3);
    moveTo(ed, 4);
    moveTo(ed, 11);
    vi.advanceTimersByTime(CURSOR_DEBOUNCE_MS - 1);
    expect(post).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(post).toHaveBeenCalledTimes(1);
    expect(post).toHaveBeenCalledWith({ type: 'cursor', file: '/w/k.py', line: 12 });
    expect(CURSOR_DEBOUNCE_MS).toBe(150);
  });

  it('does not repeat the same line, except after reset or flush', () => {
    const post = vi.fn();
    sync = new CursorSync(() => ({ post }));
    const ed = makeEditor(makeDocument('/w/k.py', ''));
    moveTo(ed, 5);
    vi.advanceTimersByTime(200);
    moveTo(ed, 5); // e.g. a column change on the same line
    vi.advanceTimersByTime(200);
    expect(post).toHaveBeenCalledTimes(1);
    sync.reset();
    moveTo(ed, 5);
    vi.advanceTimersByTime(200);
    expect(post).toHaveBeenCalledTimes(2);
    sync.flush(ed as never);
    expect(post).toHaveBeenCalledTimes(3);
  });

  it('ignores non-Python editors and sends nothing without a panel', () => {
    const post = vi.fn();
    let panel: { post: typeof post } | undefined = undefined; // no panel yet; one appears below
    sync = new CursorSync(() => panel);
    moveTo(makeEditor(makeDocument('/w/k.py', '')), 2);
    vi.advanceTimersByTime(200);
    panel = { post };
    moveTo(makeEditor(makeDocument('/w/notes.md', '', 'markdown')), 2);
    vi.advanceTimersByTime(200);
    expect(post).not.toHaveBeenCalled();
  });

  it('sends only cursors in files the view shows', () => {
    const post = vi.fn();
    sync = new CursorSync(() => ({ post, shows: (f: string) => f === '/w/k.py' || f === '/w/kernels_lib.py' }));
    moveTo(makeEditor(makeDocument('/w/other.py', '')), 2);
    vi.advanceTimersByTime(200);
    expect(post).not.toHaveBeenCalled();
    moveTo(makeEditor(makeDocument('/w/kernels_lib.py', '')), 4);
    vi.advanceTimersByTime(200);
    expect(post).toHaveBeenCalledWith({ type: 'cursor', file: '/w/kernels_lib.py', line: 5 });
  });

  it('sends the position of a newly active editor', () => {
    const post = vi.fn();
    sync = new CursorSync(() => ({ post }));
    mock.onDidChangeActiveTextEditor.fire(makeEditor(makeDocument('/w/b.py', ''), 7) as never);
    vi.advanceTimersByTime(200);
    expect(post).toHaveBeenCalledWith({ type: 'cursor', file: '/w/b.py', line: 8 });
  });

  it("sends a notebook cell's line as the server maps it (the view's script line), dropping a late answer", async () => {
    const post = vi.fn();
    const answers: ((v: unknown) => void)[] = [];
    const lines = { request: vi.fn(() => new Promise((r) => answers.push(r))) };
    sync = new CursorSync(() => ({ post, shows: (f: string) => f === '/w/nb.ipynb' }), CURSOR_DEBOUNCE_MS, lines);
    const cellUri = Uri.parse('vscode-notebook-cell:/w/nb.ipynb#W2sZmlsZQ%3D%3D');
    const cell = makeEditor({ ...makeDocument('/w/cell', ''), uri: cellUri } as never);
    moveTo(cell, 4);
    vi.advanceTimersByTime(CURSOR_DEBOUNCE_MS);
    expect(lines.request).toHaveBeenCalledWith('tritonLens/viewLocation', { uri: cellUri.toString(), line: 5 });
    moveTo(cell, 5);
    vi.advanceTimersByTime(CURSOR_DEBOUNCE_MS);
    answers[1]({ uri: 'file:///w/nb.ipynb', file: '/w/nb.ipynb', line: 15 });
    answers[0]({ uri: 'file:///w/nb.ipynb', file: '/w/nb.ipynb', line: 14 }); // the older position's, late
    await vi.waitFor(() => expect(post).toHaveBeenCalled());
    await Promise.resolve();
    expect(post.mock.calls).toEqual([[{ type: 'cursor', file: '/w/nb.ipynb', line: 15 }]]);
  });
});
