// Generated from server/triton_lens/lsp_messages.schema.json by extension/scripts/gen-lsp-messages.mjs:
// do not edit (npm run gen-protocol rewrites it; extension/test/lspMessages.test.ts fails when it is stale).

export interface RunPlanParams {
  /** a file: URI */
  uri: string;
  /** the editor's buffer; else the open document, else the file on disk */
  text?: string;
}

/** Which command a file gets, and whether it gets one (source/plan.py owns the rule). */
export interface RunPlan {
  file: string;
  runnable: boolean;
  /** why it is not run (empty when runnable) */
  whyNot: string;
  origin: 'file' | 'comment' | 'setting';
  /** the run comment's 1-based line (0: none) */
  originLine: number;
  /** argv with ${file} & co. already expanded; null: the file itself, as __main__ */
  command: string[] | null;
  cwd: string | null;
}

export interface KernelOutlineParams {
  uri: string;
  /** the cursor's 0-based line */
  line?: number;
  /** the editor's text; else the server's copy */
  text?: string;
}

export interface KernelParam {
  name: string;
  line: number;
  col: number;
  endCol: number;
}

/** One kernel; every line is 0-based. */
export interface KernelOutline {
  name: string;
  /** the `def` line */
  line: number;
  /** the column of the kernel's name on its `def` line */
  col: number;
  /** the first decorator */
  firstLine: number;
  /** the last line of the body */
  endLine: number;
  /** the first statement of the body, after a docstring */
  bodyLine: number;
  /** false: read from the lines of a file that does not parse yet */
  exact: boolean;
  params: KernelParam[];
}

export interface Outline {
  kernels: KernelOutline[];
  /** index of the kernel the asked-for line is in (or launches), else the only kernel, else null */
  at: number | null;
}

export interface ViewLocationParams {
  /** a document: a notebook cell or a file */
  uri: string;
  /** 1-based */
  line: number;
}

export type ViewLocationResult = {
  uri: string;
  file: string;
  /** 1-based */
  line: number;
} | null;

export interface EditorLocationParams {
  /** the document the view is of */
  uri: string;
  /** the file as the page names it */
  file: string;
  /** 1-based */
  line: number;
}

export type EditorLocationResult = {
  uri: string;
  line: number;
} | null;

export interface RunStartedParams {
  uri: string;
  version: number;
}

/** A run's partial results are shown: a sample of one launch's programs. */
export interface RunPartialParams {
  uri: string;
  version: number;
  kernel: string;
  /** 0-based */
  launch: number;
  programsDone: number;
  programsTotal: number;
  ms: number;
}

/** The run's CUDA tensors were CPU tensors: nothing ran on a GPU. */
export interface CudaStandIn {
  gpu: string;
  reason: string;
}

export interface RunFinishedParams {
  uri: string;
  version: number;
  status: 'ok' | 'exception' | 'timeout' | 'crashed' | 'no-launch' | 'error' | 'cancelled';
  ms: number;
  launches: number;
  cudaStandIn?: CudaStandIn | null;
  /** another run of the same document is in flight (the server adopted this older one's result) */
  running?: boolean;
}

/** The requests the extension sends the server: their params and their answer. */
export interface LspRequests {
  runPlan: { params: RunPlanParams; result: RunPlan };
  kernelOutline: { params: KernelOutlineParams; result: Outline };
  viewLocation: { params: ViewLocationParams; result: ViewLocationResult };
  editorLocation: { params: EditorLocationParams; result: EditorLocationResult };
}

/** The notifications the server sends the extension, and their params. */
export interface LspNotifications {
  runStarted: RunStartedParams;
  runPartial: RunPartialParams;
  runFinished: RunFinishedParams;
}

/** The requests' LSP method names. */
export const LSP_REQUESTS = {
  runPlan: 'tritonLens/runPlan',
  kernelOutline: 'tritonLens/kernelOutline',
  viewLocation: 'tritonLens/viewLocation',
  editorLocation: 'tritonLens/editorLocation',
} as const;

/** The notifications' LSP method names. */
export const LSP_NOTIFICATIONS = {
  runStarted: 'tritonLens/runStarted',
  runPartial: 'tritonLens/runPartial',
  runFinished: 'tritonLens/runFinished',
} as const;
