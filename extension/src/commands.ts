// Command ids and their handlers.
import * as vscode from 'vscode';
import type { AccessMapManager } from './accessMapPanel';
import type { CursorSync } from './cursorSync';
import type { KernelDebugger } from './debug';
import { kernelOutline } from './kernelOutline';
import type { ServerManager } from './server';
import { isNotebookCell, viewLocation } from './sourceLines';

export const COMMANDS = {
  restartServer: 'tritonLens.restartServer',
  showOutput: 'tritonLens.showOutput',
  visualize: 'tritonLens.visualize',
  visualizeAtCursor: 'tritonLens.visualizeAtCursor',
  debugKernel: 'tritonLens.debugKernel',
  debugKernelAtCursor: 'tritonLens.debugKernelAtCursor',
} as const;

export interface CommandDeps {
  server: Pick<ServerManager, 'restart' | 'request'>;
  log: vscode.LogOutputChannel;
  accessMap: Pick<AccessMapManager, 'show'>;
  cursor: Pick<CursorSync, 'reset' | 'flush'>;
  debugger: Pick<KernelDebugger, 'debugKernel'>;
}

/** Code lens arguments arrive as strings (JSON); accept a Uri too. */
export function toUri(u: unknown): vscode.Uri | undefined {
  if (u instanceof vscode.Uri) return u;
  if (typeof u === 'string' && u)
    return /^[a-z][\w+.-]+:/i.test(u) && !/^[a-z]:[\\/]/i.test(u) ? vscode.Uri.parse(u) : vscode.Uri.file(u);
  if (u && typeof u === 'object' && 'fsPath' in u) return vscode.Uri.file(String((u as { fsPath: string }).fsPath));
  return undefined;
}

/** The kernel for the active editor's cursor (the server's kernel finder), asking when it is ambiguous. */
export async function kernelAtCursor(
  editor: vscode.TextEditor | undefined,
  server: Pick<ServerManager, 'request'>,
): Promise<{ uri: vscode.Uri; name: string; defLine: number } | undefined> {
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('Triton Lens: open a Python file with a Triton kernel first.');
    return undefined;
  }
  let outline;
  try {
    outline = await kernelOutline(server, editor.document, editor.selection.active.line);
  } catch (e) {
    void vscode.window.showErrorMessage(`Triton Lens: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
  let k = outline.at === null ? undefined : outline.kernels[outline.at];
  if (!k) {
    const all = outline.kernels;
    if (!all.length) {
      void vscode.window.showInformationMessage('Triton Lens: no @triton.jit kernel in this file.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      all.map((x) => ({ label: x.name, description: `line ${x.line + 1}`, kernel: x })),
      { placeHolder: 'Which kernel?' },
    );
    if (!pick) return undefined;
    k = pick.kernel;
  }
  return { uri: editor.document.uri, name: k.name, defLine: k.line };
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const visualize = (uri: vscode.Uri, name: string | undefined, defLine?: number) => {
    deps.cursor.reset();
    deps.accessMap.show(uri, name, defLine !== undefined && Number.isFinite(defLine) ? defLine + 1 : undefined);
  };
  return [
    vscode.commands.registerCommand(COMMANDS.restartServer, () => deps.server.restart('"Restart Server" command')),
    vscode.commands.registerCommand(COMMANDS.showOutput, () => deps.log.show(true)),
    // code lens: [uri, kernelName, defLine (0-based)]
    vscode.commands.registerCommand(COMMANDS.visualize, (u?: unknown, name?: unknown, defLine?: unknown) => {
      const uri = toUri(u) ?? vscode.window.activeTextEditor?.document.uri;
      if (!uri) return;
      visualize(uri, typeof name === 'string' ? name : undefined, typeof defLine === 'number' ? defLine : undefined);
    }),
    vscode.commands.registerCommand(COMMANDS.visualizeAtCursor, async () => {
      const k = await kernelAtCursor(vscode.window.activeTextEditor, deps.server);
      if (!k) return;
      if (isNotebookCell({ uri: k.uri })) {
        // a cell's kernel is its notebook's: the view is of the notebook, at the script's line (the server's)
        const at = await viewLocation(deps.server, k.uri, k.defLine + 1).catch(() => null);
        if (!at) return;
        visualize(vscode.Uri.parse(at.uri), k.name, at.line - 1);
      } else visualize(k.uri, k.name, k.defLine);
      deps.cursor.flush(); // follow the load/store the cursor is on, if it is on one
    }),
    // code lens: [uri, kernelName]
    vscode.commands.registerCommand(COMMANDS.debugKernel, async (u?: unknown, name?: unknown) => {
      const uri = toUri(u) ?? vscode.window.activeTextEditor?.document.uri;
      if (!uri) return false;
      return deps.debugger.debugKernel(uri, typeof name === 'string' ? name : undefined);
    }),
    vscode.commands.registerCommand(COMMANDS.debugKernelAtCursor, async () => {
      const k = await kernelAtCursor(vscode.window.activeTextEditor, deps.server);
      return k ? deps.debugger.debugKernel(k.uri, k.name) : false;
    }),
  ];
}
