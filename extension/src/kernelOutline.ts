// The file's kernels, asked of the server (its kernel finder reads the Python syntax tree): the extension
// never parses Python itself.
import type * as vscode from 'vscode';

export const KERNEL_OUTLINE = 'tritonLens/kernelOutline';

/** One kernel; every line is 0-based. */
export interface KernelOutline {
  name: string;
  /** the `def` line, and the column of the kernel's name on it */
  line: number;
  col: number;
  /** the first decorator */
  firstLine: number;
  /** the last line of the body */
  endLine: number;
  /** the first statement of the body, after a docstring */
  bodyLine: number;
  /** false: read from the lines of a file that does not parse yet */
  exact: boolean;
  params: { name: string; line: number; col: number; endCol: number }[];
}

export interface Outline {
  kernels: KernelOutline[];
  /** index of the kernel the asked-for line is in (or launches), else the only kernel, else null */
  at: number | null;
}

export interface OutlineServer {
  request<R>(method: string, params: unknown): Promise<R>;
}

/** The outline of the document's current text (sent along: the server may not have the file open). */
export function kernelOutline(server: OutlineServer, doc: vscode.TextDocument, line?: number): Promise<Outline> {
  return server.request<Outline>(KERNEL_OUTLINE, { uri: doc.uri.toString(), text: doc.getText(), line });
}
