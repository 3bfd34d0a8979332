// The extension's types of Triton Lens's own LSP messages are the JSON Schema's
// (server/triton_lens/lsp_messages.schema.json, which the server's tests validate what it sends against): the
// checked-in lspMessages.ts is exactly what the generator makes of the schema now, and the extension sends and
// listens under the schema's method names.
import * as fs from 'fs';
import { describe, expect, it, vi } from 'vitest';
// @ts-expect-error: a plain Node script, no type declarations
import { generate, OUT, readSchema } from '../scripts/gen-lsp-messages.mjs';
import { RUN_PLAN } from '../src/debug';
import { KERNEL_OUTLINE } from '../src/kernelOutline';
import { LSP_NOTIFICATIONS, LSP_REQUESTS } from '../src/lspMessages';
import { EDITOR_LOCATION, VIEW_LOCATION } from '../src/sourceLines';

vi.mock('vscode-languageclient/node', () => ({ LanguageClient: class {} })); // server.ts's client: not started here
const { RUN_FINISHED, RUN_PARTIAL, RUN_STARTED } = await import('../src/server');

describe('lspMessages.ts', () => {
  it('is up to date with the schema (run `npm run gen-protocol` after changing it)', async () => {
    expect(fs.readFileSync(OUT, 'utf8')).toBe(await generate(await readSchema()));
  });

  it('changes when the schema does', async () => {
    const schema = await readSchema();
    schema.$defs.RunFinishedParams.properties.launches = { type: 'array', items: { type: 'string' } };
    const changed = await generate(schema);
    expect(changed).toContain('launches: string[];');
    expect(changed).not.toBe(fs.readFileSync(OUT, 'utf8'));
  });

  it('refuses a message without a tritonLens/ method or with an unknown type', async () => {
    const bad = await readSchema();
    bad.notifications.runStarted.method = 'runStarted';
    await expect(generate(bad)).rejects.toThrow(/runStarted: method must be tritonLens/);
    const dangling = await readSchema();
    dangling.requests.runPlan.result = '#/$defs/Nothing';
    await expect(generate(dangling)).rejects.toThrow(/runPlan: unknown #\/\$defs\/Nothing/);
  });

  it('names every message as the schema does', async () => {
    const schema = await readSchema();
    expect([RUN_PLAN, KERNEL_OUTLINE, VIEW_LOCATION, EDITOR_LOCATION]).toEqual(
      ['runPlan', 'kernelOutline', 'viewLocation', 'editorLocation'].map((m) => schema.requests[m].method),
    );
    expect([RUN_STARTED, RUN_PARTIAL, RUN_FINISHED]).toEqual(
      ['runStarted', 'runPartial', 'runFinished'].map((m) => schema.notifications[m].method),
    );
    expect(Object.keys(LSP_REQUESTS).sort()).toEqual(Object.keys(schema.requests).sort());
    expect(Object.keys(LSP_NOTIFICATIONS).sort()).toEqual(Object.keys(schema.notifications).sort());
  });
});
