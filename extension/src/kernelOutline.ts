// The file's kernels, asked of the server (its kernel finder reads the Python syntax tree): the extension
// never parses Python itself.
import type * as vscode from 'vscode';
import { LSP_REQUESTS, type Outline } from './lspMessages';

export const KERNEL_OUTLINE = LSP_REQUESTS.kernelOutline;

export type { KernelOutline, Outline } from './lspMessages';

export interface OutlineServer {
  request<R>(method: string, params: unknown): Promise<R>;
}

/** The outline of the document's current text (sent along: the server may not have the file open). */
export function kernelOutline(server: OutlineServer, doc: vscode.TextDocument, line?: number): Promise<Outline> {
  return server.request<Outline>(KERNEL_OUTLINE, { uri: doc.uri.toString(), text: doc.getText(), line });
}
