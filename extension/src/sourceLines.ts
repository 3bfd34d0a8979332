// The access map's lines and the editor's, asked of the server (lsp/source_lines.py): in a notebook the view
// names the .ipynb and the line of the script its code cells make, the editor a cell and a line inside it.
// The server owns that mapping (the notebook's cells and their order); the extension never computes it.
import type * as vscode from 'vscode';
import { LSP_REQUESTS, type EditorLocationResult, type ViewLocationResult } from './lspMessages';

export const VIEW_LOCATION = LSP_REQUESTS.viewLocation;
export const EDITOR_LOCATION = LSP_REQUESTS.editorLocation;

export interface LineServer {
  request<R>(method: string, params: unknown): Promise<R>;
}

/** Where a line of the view is: the document the view is of (a notebook's for a cell), its file, 1-based line. */
export type ViewLocation = NonNullable<ViewLocationResult>;

/** The document (a cell's in a notebook) and 1-based line the editor shows for a line of the view. */
export type EditorLocation = NonNullable<EditorLocationResult>;

export const NOTEBOOK_CELL_SCHEME = 'vscode-notebook-cell';

export function isNotebookCell(doc: Pick<vscode.TextDocument, 'uri'>): boolean {
  return doc.uri.scheme === NOTEBOOK_CELL_SCHEME;
}

/** The view's location of a 1-based line of a document (a cell or a file); null where the view has none. */
export function viewLocation(server: LineServer, uri: vscode.Uri, line: number): Promise<ViewLocation | null> {
  return server.request<ViewLocation | null>(VIEW_LOCATION, { uri: uri.toString(), line });
}

/** The editor's location of a line the page of `viewUri`'s view names (file + 1-based line). */
export function editorLocation(
  server: LineServer,
  viewUri: vscode.Uri,
  file: string,
  line: number,
): Promise<EditorLocation | null> {
  return server.request<EditorLocation | null>(EDITOR_LOCATION, { uri: viewUri.toString(), file, line });
}

/**
 * The overview's cell names as VS Code shows cells: the server numbers the cells it was sent, and VS Code
 * sends only the Python ones, so each named range is renamed by its cell's index in the notebook (`cellIndex`:
 * 0-based, undefined for a cell not open). The page then says "cell 3" where VS Code's status bar says
 * "Cell 3 of 5".
 */
export function namedAsShown<T extends { lineNames?: { cell?: string; name: string }[] }>(
  ov: T,
  cellIndex: (uri: string) => number | undefined,
): T {
  if (!ov || !Array.isArray(ov.lineNames)) return ov;
  const lineNames = ov.lineNames.map((n) => {
    const i = typeof n.cell === 'string' ? cellIndex(n.cell) : undefined;
    return i === undefined ? n : { ...n, name: `cell ${i + 1}` };
  });
  return { ...ov, lineNames };
}

/** The 0-based index in its notebook of an open cell's document, by URI. */
export function openCellIndex(notebooks: readonly vscode.NotebookDocument[], uri: string): number | undefined {
  for (const nb of notebooks) {
    for (const cell of nb.getCells()) if (cell.document.uri.toString() === uri) return cell.index;
  }
  return undefined;
}
