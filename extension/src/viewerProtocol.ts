// Generated from server/triton_lens/viewer_protocol.schema.json by extension/scripts/gen-viewer-protocol.mjs:
// do not edit (npm run gen-protocol rewrites it; extension/test/viewerProtocol.test.ts fails when it is stale).

/** A set of element indices: null (empty), sorted disjoint runs [start0, len0, ...], or a little-bit-order bitmap over [lo, lo+n) */
export type Enc =
  | null
  | {
      runs: number[];
    }
  | {
      lo: number;
      n: number;
      bits: string;
    };

export interface Tensor {
  index: number;
  name: string;
  shape: number[];
  strides: number[];
  dtype: string;
  itemsize: number;
  numel: number;
  device?: string;
}

export interface Launch {
  index: number;
  grid: number[];
  file: string;
  line: number;
  programs: number;
  complete?: boolean;
  tensors?: Tensor[];
}

export interface Kernel {
  name: string;
  file: string | null;
  line: number;
  launches: Launch[];
}

export interface Site {
  id: number;
  file: string;
  line: number;
  col: number;
  end_line: number;
  end_col: number;
  arg?: number;
  kind: string;
  op: string;
  sem?: string;
  scope?: string;
  unmasked?: boolean;
}

export interface Step {
  lanes: number;
  active: number;
  touched: Enc;
  masked: Enc;
  oob: Enc;
}

export interface Access {
  site: number;
  program: number[];
  label: number[];
  executions: number;
  lanes: number;
  active: number;
  touched: Enc;
  masked: Enc;
  oob: Enc;
  rows: number[];
  steps?: Step[];
}

export interface Histogram {
  file: string;
  line: number;
  lo: number;
  hi: number;
  counts: number[];
  /** the elements the histogram counts (of the sample, when the values are a sample) */
  elements: number;
  nonfinite: number;
  /** when the values are a sample: the elements the line touched in the whole tensor */
  touched?: number;
}

export type Operand =
  | {
      shape: number[];
      linked: true;
      file: string;
      line: number;
      op: string;
      tensor: number;
      name: string;
      iteration: number;
      extent: string;
      elements: number;
    }
  | {
      shape: number[];
      linked: false;
      why: string;
    };

export interface DotSite {
  id: number;
  file: string;
  line: number;
  col?: number;
  end_line?: number;
  end_col?: number;
  a_dtype: string;
  b_dtype: string;
  acc_dtype: string;
}

export interface DotExecution {
  site: number;
  program: number[];
  linear: number;
  iteration: number;
  m: number;
  n: number;
  k: number;
  a: Operand;
  b: Operand;
  c: number[];
  /** the run kept this execution's tile values (the dotTiles request) */
  values: boolean;
}

export interface Gpu {
  key: string;
  name: string;
  bandwidth: number;
  flops: {
    fp32: number;
    tf32: number;
    fp16: number;
    fp8: number;
  };
  source: string;
}

export interface LineMetrics {
  file: string;
  line: number;
  arg: string;
  kind: string;
  op: string;
  dtype: string;
  bytes: number;
  sector_bytes: number;
  mask_efficiency: number | null;
  sector_efficiency: number | null;
  reuse: number | null;
  run_bytes: number | null;
  stride_bytes: number | null;
  sampled: boolean;
}

export interface DotMetrics {
  file: string;
  line: number;
  launches: number[];
  executions: number;
  m: number;
  n: number;
  k: number;
  a_dtype: string;
  b_dtype: string;
  precision: string;
  flops: number;
}

export interface Roofline {
  gpu: string;
  seconds: number;
  memory_seconds: number;
  compute_seconds: number;
  bound: 'memory' | 'compute';
}

export interface LaunchMetrics {
  launch: number;
  kernel: string;
  bytes: number;
  dram_bytes: number;
  flops: number;
  intensity: number | null;
  roofline: {
    [key: string]: Roofline;
  };
}

export type KernelsParams = Record<string, never>;

export interface KernelsResult {
  file: string | null;
  status: string;
  kernels: Kernel[];
  /** the files the viewer may show (the source request's) */
  files: string[];
  /** LSP: the document version the run is of (null: none finished) */
  version?: number | null;
  /** LSP: the document's version now */
  docVersion?: number | null;
  /** LSP: the run is of an earlier version of the document */
  stale?: boolean;
  /** LSP: a run of the document is in progress */
  running?: boolean;
  /** LSP: lines the page names otherwise than by number (a notebook's lines, by cell); absent: every line by its number */
  lineNames?: LineName[];
}

export interface AccessMapParams {
  /** the index of a launch in the kernels overview */
  launch: number;
  /** the tensor's index among the launch's tensor arguments */
  tensor: number;
  /** only the sites on this 1-based source line */
  line?: number;
}

export interface AccessMapResult {
  launch: {
    index: number;
    kernel: string;
    grid: number[];
    file: string;
    line: number;
  };
  tensor: Tensor;
  sites: Site[];
  accesses: Access[];
  steps_truncated: boolean;
}

export interface ValuesParams {
  /** the index of a launch in the kernels overview */
  launch: number;
  /** the tensor's index among the launch's tensor arguments */
  tensor: number;
  /** first flat row-major element (negative: 0) */
  start?: number;
  /** elements (at most 4096) */
  count?: number;
}

export interface ValuesResult {
  start: number;
  values: (number | string | null)[] | null;
  /** the values are a sample of 1 in [rows, columns] (a tensor over the value limit) */
  sampled?: number[];
}

export interface ValueMapParams {
  /** the index of a launch in the kernels overview */
  launch: number;
  /** the tensor's index among the launch's tensor arguments */
  tensor: number;
  when?: 'after' | 'before';
}

export type ValueMapResult =
  | {
      when: 'after' | 'before';
      dtype: string;
      numel: number;
      /** the tensor's colour scale: the smallest cell (a cell: one element, or the mean of `block`) */
      lo: number;
      /** the largest cell */
      hi: number;
      block: number;
      cells: number;
      /** base64 of one uint8 per cell: 0..254 over [lo, hi], 255 NaN/inf */
      q: string;
      histograms: Histogram[];
      before: boolean;
      after: boolean;
      /** values of a tensor over the value limit are a sample: 1 in rows_step rows (the dimensions before the last folded into rows) */
      rows_step?: number;
      /** and 1 in cols_step columns (the last dimension); the cells are of the sample's flat order */
      cols_step?: number;
      /** columns per sampled row */
      sample_cols?: number;
      /** elements in the sample */
      sampled?: number;
    }
  | {
      when: 'after' | 'before';
      values: null;
      reason: string;
    };

export interface DotsParams {
  /** the index of a launch in the kernels overview */
  launch: number;
}

export interface DotsResult {
  launch: number;
  sites: DotSite[];
  executions: DotExecution[];
  truncated: boolean;
}

export interface DotTilesParams {
  /** the index of a launch in the kernels overview */
  launch: number;
  /** the execution's index in the dots answer's executions */
  execution: number;
}

/** a tile's values as colour levels over its own range */
export interface Tile {
  /** rows, columns of the tile */
  shape: number[];
  /** rows, columns drawn (at most 128 a side) */
  cells: number[];
  /** values per cell: rows, columns (1, 1: each cell one value) */
  block: number[];
  lo: number;
  hi: number;
  /** base64, one byte a cell, row-major: 0..254 from lo to hi (the mean of its block), 255 NaN or inf */
  q: string;
}

export interface DotTilesResult {
  execution: number;
  /** false: the run did not keep this execution's values (why says which it kept) */
  kept: boolean;
  why?: string;
  a?: Tile;
  b?: Tile;
  /** the result: acc + A @ B as the GPU computes it */
  c?: Tile;
}

export interface PerformanceParams {
  /** the index of a launch in the kernels overview */
  launch: number;
}

export interface PerformanceResult {
  gpus: Gpu[];
  lines: LineMetrics[];
  dots: DotMetrics[];
  launches: LaunchMetrics[];
}

export interface SourceParams {
  file: string;
}

export interface SourceResult {
  file: string;
  text: string;
  lines: {
    line: number;
    kinds: string[];
    args: string[];
  }[];
  kernels: {
    name: string;
    line: number;
  }[];
}

/** HTTP: the body of a 400 (bad parameter) or 404 (no such launch, tensor, file or request); LSP: InvalidParams with the message */
export interface Error {
  error: {
    message: string;
  };
}

/** the lines first..last (1-based, inclusive) of file, named `name, line k` (k from 1 at first): a notebook's code cell in the script its cells make */
export interface LineName {
  file: string;
  first: number;
  last: number;
  /** 'cell N': N the cell's 1-based position among the notebook's cells the server was sent (VS Code sends the Python cells only: its extension renames by the cell's index in the notebook, as VS Code's status bar counts) */
  name: string;
  /** the cell's document URI */
  cell?: string;
}

/** Every method of the viewer service: its params and its answer. */
export interface ViewerMethods {
  kernels: { params: KernelsParams; result: KernelsResult };
  accessMap: { params: AccessMapParams; result: AccessMapResult };
  values: { params: ValuesParams; result: ValuesResult };
  valueMap: { params: ValueMapParams; result: ValueMapResult };
  dots: { params: DotsParams; result: DotsResult };
  dotTiles: { params: DotTilesParams; result: DotTilesResult };
  performance: { params: PerformanceParams; result: PerformanceResult };
  source: { params: SourceParams; result: SourceResult };
}

export type ViewerMethod = keyof ViewerMethods;
export type ViewerParams<M extends ViewerMethod> = ViewerMethods[M]['params'];
export type ViewerResult<M extends ViewerMethod> = ViewerMethods[M]['result'];

/** The methods the language server answers, with their LSP request names. */
export const LSP_METHODS = {
  kernels: 'tritonLens/kernels',
  accessMap: 'tritonLens/accessMap',
  values: 'tritonLens/values',
  valueMap: 'tritonLens/valueMap',
  dots: 'tritonLens/dots',
  dotTiles: 'tritonLens/dotTiles',
  performance: 'tritonLens/performance',
} as const;

export type LspMethod = keyof typeof LSP_METHODS;

/** The HTTP routes of the browser viewer. */
export const HTTP_ROUTES = {
  kernels: 'POST /api/kernels',
  accessMap: 'POST /api/accessMap',
  values: 'POST /api/values',
  valueMap: 'POST /api/valueMap',
  dots: 'POST /api/dots',
  dotTiles: 'POST /api/dotTiles',
  performance: 'POST /api/performance',
  source: 'POST /api/source',
} as const;
