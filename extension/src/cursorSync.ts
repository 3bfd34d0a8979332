// Tells the access-map page where the editor cursor is: {type:"cursor", file, line} (line 1-based), debounced.
import * as vscode from 'vscode';
import type { HostEvent } from './accessMapPanel';

export const CURSOR_DEBOUNCE_MS = 150;

export interface CursorTarget {
  post(ev: HostEvent): void;
  /** Only files the view shows get cursor events (PROTOCOL.md). */
  shows?(file: string): boolean;
}

export class CursorSync implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly target: () => CursorTarget | undefined,
    private readonly delayMs = CURSOR_DEBOUNCE_MS,
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
    const t = this.target();
    if (!t || !isKernelSource(editor.document)) return;
    const ev: HostEvent = { type: 'cursor', file: editor.document.uri.fsPath, line: editor.selection.active.line + 1 };
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

export function isKernelSource(doc: vscode.TextDocument): boolean {
  return doc.languageId === 'python' && doc.uri.scheme === 'file';
}
