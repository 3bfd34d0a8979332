// Tells the access-map page where the editor cursor is: {type:"cursor", file, line} (line 1-based), debounced.
// A notebook cell's line is asked of the server (sourceLines.ts): the view names the notebook's script lines.
import * as vscode from 'vscode';
import type { HostEvent } from './accessMapPanel';
import { isNotebookCell, viewLocation, type LineServer } from './sourceLines';

export const CURSOR_DEBOUNCE_MS = 150;

export interface CursorTarget {
  post(ev: HostEvent): void;
  /** Only files the view shows get cursor events (PROTOCOL.md). */
  shows?(file: string): boolean;
}

export class CursorSync implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last: string | undefined;
  /** Counts the positions sent: a cell's answer that comes back after a newer position is dropped. */
  private seq = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly target: () => CursorTarget | undefined,
    private readonly delayMs = CURSOR_DEBOUNCE_MS,
    /** Maps a notebook cell's line to the view's; without it, cells are not followed. */
    private readonly lines?: LineServer,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeTextEditorSelection((e) => this.schedule(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((e) => e && this.schedule(e)),
    );
  }

  /** Forget the last position sent (a new page needs it again). */
  reset(): void {
    this.last = undefined;
  }

  /** Sends the active editor's position now (e.g. right after the panel opens). */
  flush(editor = vscode.window.activeTextEditor): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (editor) this.send(editor, true);
  }

  private schedule(editor: vscode.TextEditor): void {
    if (!isKernelSource(editor.document) || !this.target()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send(editor, false);
    }, this.delayMs);
  }

  private send(editor: vscode.TextEditor, force: boolean): void {
    if (!this.target() || !isKernelSource(editor.document)) return;
    const line = editor.selection.active.line + 1;
    const seq = ++this.seq;
    if (!isNotebookCell(editor.document)) {
      this.post(editor.document.uri.fsPath, line, force);
      return;
    }
    if (!this.lines) return;
    viewLocation(this.lines, editor.document.uri, line).then(
      (at) => {
        if (at && seq === this.seq) this.post(at.file, at.line, force);
      },
      () => undefined, // the server is not running: nothing to follow
    );
  }

  private post(file: string, line: number, force: boolean): void {
    const t = this.target();
    if (!t) return;
    const ev: HostEvent = { type: 'cursor', file, line };
    if (t.shows && !t.shows(ev.file)) return;
    const key = `${ev.file}:${ev.line}`;
    if (!force && key === this.last) return;
    this.last = key;
    t.post(ev);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A Python file, or a Python cell of a notebook. */
export function isKernelSource(doc: vscode.TextDocument): boolean {
  return doc.languageId === 'python' && (doc.uri.scheme === 'file' || isNotebookCell(doc));
}
