import { beforeEach, describe, expect, it } from 'vitest';
import { makeDocument, makeEditor, mock, window } from 'vscode';
import { describeStatus, formatMs, render, StatusBar } from '../src/statusBar';

beforeEach(() => mock.reset());

function item() {
  return window.createStatusBarItem.mock.results.at(-1)!.value as {
    text: string;
    tooltip: string;
    backgroundColor: unknown;
    command: unknown;
  };
}

describe('render', () => {
  it('shows running, done in N ms, and errors', () => {
    expect(render({ kind: 'running', uri: 'file:///w/k.py' }).text).toBe('$(sync~spin) Triton Lens: running');
    expect(render({ kind: 'done', uri: 'file:///w/k.py', ms: 812.4, launches: 2 })).toMatchObject({
      text: '$(check) Triton Lens: done in 812 ms',
      error: false,
    });
    expect(render({ kind: 'done', uri: 'file:///w/k.py', ms: 5, launches: 2 }).tooltip).toContain(
      'k.py: 2 launches in 5 ms',
    );
    expect(render({ kind: 'failed', uri: 'file:///w/k.py', status: 'timeout', ms: 60000 })).toMatchObject({
      text: '$(error) Triton Lens: hit the time limit',
      error: true,
    });
  });
  it('says what each run status means, in words, never the raw id', () => {
    const ids = ['exception', 'timeout', 'crashed', 'no-launch', 'error', 'cancelled'];
    for (const status of ids) {
      const r = render({ kind: 'failed', uri: 'file:///w/k.py', status, ms: 5 });
      const words = r.text.replace(/^\$\([a-z-]+\) Triton Lens: /, '');
      expect(words).not.toBe(status);
      expect(words).toMatch(/^[a-z]+( [a-z]+)+$/); // words, not an id like "no-launch"
      expect(r.tooltip).not.toContain(`"${status}"`);
      expect(r.tooltip).toContain('k.py');
    }
    const noLaunch = render({ kind: 'failed', uri: 'file:///w/lib.py', status: 'no-launch', ms: 5 });
    // a library file is not an error: not red, and the tooltip says how to give it a run
    expect(noLaunch).toMatchObject({ text: '$(info) Triton Lens: no kernel launch', error: false });
    expect(noLaunch.tooltip).toContain('# triton-lens: run');
    expect(render({ kind: 'failed', uri: 'file:///w/k.py', status: 'exception', ms: 5 })).toMatchObject({
      text: '$(error) Triton Lens: script raised an exception',
      error: true,
    });
    expect(render({ kind: 'failed', uri: 'file:///w/k.py', status: 'cancelled', ms: 5 }).error).toBe(false);
    expect(describeStatus('timeout').sentence).toContain('tritonLens.timeLimit');
    expect(describeStatus('crashed').sentence).toContain('tritonLens.memoryLimitMb');
    expect(render({ kind: 'failed', uri: 'file:///w/k.py', status: 'weird', ms: 5 }).text).toBe(
      '$(error) Triton Lens: run ended "weird"',
    );
  });
  it('says when CPU tensors stood in for CUDA ones, in the text and the tooltip', () => {
    const standIn = { gpu: 'NVIDIA H100 80GB HBM3', reason: 'no CUDA device on this machine' };
    const done = render({ kind: 'done', uri: 'file:///w/k.py', ms: 812.4, launches: 1, standIn });
    expect(done.text).toBe('$(check) Triton Lens: done in 812 ms · CPU stand-in for CUDA');
    expect(done.tooltip).toContain('CPU stand-in for CUDA (no CUDA device on this machine)');
    expect(done.tooltip).toContain('stood-in NVIDIA H100 80GB HBM3; nothing ran on a GPU');
    const failed = render({ kind: 'failed', uri: 'file:///w/k.py', status: 'exception', ms: 9, standIn });
    expect(failed.text).toBe('$(error) Triton Lens: script raised an exception');
    expect(failed.tooltip).toContain('CPU stand-in for CUDA');
    expect(render({ kind: 'done', uri: 'file:///w/k.py', ms: 5, launches: 1 }).tooltip).not.toContain('stand-in');
  });
  it('explains Restricted Mode', () => {
    const r = render({ kind: 'restricted' });
    expect(r.text).toContain('restricted');
    expect(r.tooltip).toMatch(/runs nothing in Restricted Mode/);
  });
  it('formats long times in seconds', () => {
    expect(formatMs(12345)).toBe('12.3 s');
    expect(formatMs(999.6)).toBe('1000 ms');
  });
});

describe('StatusBar', () => {
  it('follows runStarted/runFinished and clicks through to the output', () => {
    const bar = new StatusBar('tritonLens.showOutput');
    const it_ = item();
    expect(it_.command).toBe('tritonLens.showOutput');
    expect(it_.text).toContain('loading~spin');
    bar.setGlobal({ kind: 'idle' });
    window.activeTextEditor = makeEditor(makeDocument('/w/a.py', '')) as never;
    bar.runStarted({ uri: 'file:///w/a.py', version: 3 });
    expect(it_.text).toBe('$(sync~spin) Triton Lens: running');
    bar.runFinished({ uri: 'file:///w/a.py', version: 3, status: 'ok', ms: 41, launches: 1 });
    expect(it_.text).toBe('$(check) Triton Lens: done in 41 ms');
    expect(it_.backgroundColor).toBeUndefined();
    bar.runFinished({ uri: 'file:///w/a.py', version: 4, status: 'error', ms: 9, launches: [] });
    expect(it_.text).toBe('$(error) Triton Lens: could not run the file');
    expect(it_.backgroundColor).toBeDefined();
  });
  it('shows partial results with their program counts until the complete run replaces them', () => {
    const bar = new StatusBar('x');
    bar.setGlobal({ kind: 'idle' });
    window.activeTextEditor = makeEditor(makeDocument('/w/a.py', '')) as never;
    bar.runStarted({ uri: 'file:///w/a.py', version: 2 });
    const partial = {
      uri: 'file:///w/a.py',
      kernel: 'softmax',
      launch: 0,
      programsDone: 37,
      programsTotal: 1823,
      ms: 900,
    };
    bar.runPartial({ ...partial, version: 2 });
    expect(item().text).toBe('$(sync~spin) Triton Lens: 37 of 1823 programs');
    expect(item().tooltip).toContain("of softmax's launch so far");
    bar.runStarted({ uri: 'file:///w/a.py', version: 3 });
    bar.runPartial({ ...partial, version: 2 }); // the older run's sample: not shown over the newer run
    expect(item().text).toBe('$(sync~spin) Triton Lens: running');
    bar.runFinished({ uri: 'file:///w/a.py', version: 3, status: 'ok', ms: 5000, launches: 1 });
    expect(item().text).toBe('$(check) Triton Lens: done in 5000 ms');
  });
  it("shows the server's cudaStandIn of a run, and drops it when the next run has none", () => {
    const bar = new StatusBar('x');
    const it_ = item();
    bar.setGlobal({ kind: 'idle' });
    window.activeTextEditor = makeEditor(makeDocument('/w/a.py', '')) as never;
    const standIn = { gpu: 'NVIDIA A100-SXM4-80GB', reason: 'asked for (--cpu / tritonLens.device "cpu")' };
    bar.runFinished({ uri: 'file:///w/a.py', status: 'ok', ms: 41, launches: 1, cudaStandIn: standIn });
    expect(it_.text).toBe('$(check) Triton Lens: done in 41 ms · CPU stand-in for CUDA');
    expect(it_.tooltip).toContain('NVIDIA A100-SXM4-80GB');
    bar.runFinished({ uri: 'file:///w/a.py', status: 'ok', ms: 40, launches: 1, cudaStandIn: null });
    expect(it_.text).toBe('$(check) Triton Lens: done in 40 ms');
  });
  it("shows the active editor's file, not the latest run of another file", () => {
    const bar = new StatusBar('x');
    bar.setGlobal({ kind: 'idle' });
    const a = makeDocument('/w/a.py', '');
    window.activeTextEditor = makeEditor(a) as never;
    bar.runFinished({ uri: a.uri.toString(), status: 'ok', ms: 10, launches: 1 });
    bar.runStarted({ uri: 'file:///w/b.py' });
    expect(bar.current()).toMatchObject({ kind: 'done', ms: 10 });
    mock.onDidChangeActiveTextEditor.fire(undefined);
    window.activeTextEditor = undefined;
    mock.onDidChangeActiveTextEditor.fire(undefined);
    // no editor active (the access map focused): the latest run, naming its file
    expect(bar.current()).toMatchObject({ kind: 'running', uri: 'file:///w/b.py' });
    expect(item().text).toBe('$(sync~spin) Triton Lens: running · b.py');
  });
  it("shows a Python file with no run as such, not another file's last run", () => {
    const bar = new StatusBar('x');
    bar.setGlobal({ kind: 'idle' });
    bar.runFinished({ uri: 'file:///w/a.py', status: 'exception', ms: 10, launches: 0 });
    const helper = makeDocument('/w/helpers.py', '');
    window.activeTextEditor = makeEditor(helper) as never;
    mock.onDidChangeActiveTextEditor.fire(undefined);
    expect(bar.current()).toEqual({ kind: 'idle', uri: helper.uri.toString() });
    expect(item().text).toBe('$(pulse) Triton Lens');
    expect(item().tooltip).toContain('no run of helpers.py');
    expect(item().backgroundColor).toBeUndefined();
    // a non-Python editor (a README): the latest run, with its file named
    window.activeTextEditor = makeEditor(makeDocument('/w/README.md', '', 'markdown')) as never;
    mock.onDidChangeActiveTextEditor.fire(undefined);
    expect(item().text).toBe('$(error) Triton Lens: script raised an exception · a.py');
  });
  it('keeps "running" when an older run of the file ends after a newer one started', () => {
    const bar = new StatusBar('x');
    bar.setGlobal({ kind: 'idle' });
    window.activeTextEditor = makeEditor(makeDocument('/w/a.py', '')) as never;
    const uri = window.activeTextEditor.document.uri.toString();
    bar.runStarted({ uri, version: 1 });
    bar.runStarted({ uri, version: 2 }); // an edit: run 1 was cancelled, but its result may still come
    bar.runFinished({ uri, version: 1, status: 'ok', ms: 41, launches: 1 });
    expect(bar.current()).toMatchObject({ kind: 'running' });
    bar.runFinished({ uri, version: 2, status: 'ok', ms: 42, launches: 1 });
    expect(bar.current()).toMatchObject({ kind: 'done', ms: 42 });
    // the same version run again (a setting changed): the server says a newer run is on, as the lens does
    bar.runStarted({ uri, version: 2 });
    bar.runFinished({ uri, version: 2, status: 'ok', ms: 43, launches: 1, running: true });
    expect(bar.current()).toMatchObject({ kind: 'running' });
    bar.runFinished({ uri, version: 2, status: 'ok', ms: 44, launches: 1, running: false });
    expect(bar.current()).toMatchObject({ kind: 'done', ms: 44 });
  });
  it('lets server-wide states win over per-file ones', () => {
    const bar = new StatusBar('x');
    bar.setGlobal({ kind: 'idle' });
    bar.runFinished({ uri: 'file:///w/a.py', status: 'ok', ms: 1, launches: 1 });
    bar.setGlobal({ kind: 'setup', message: 'Triton Lens needs torch in /p: run `/p -m pip install torch`' });
    expect(item().text).toBe('$(warning) Triton Lens: setup needed');
    expect(item().tooltip).toContain('pip install torch');
  });
});
