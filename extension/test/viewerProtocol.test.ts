// The extension's viewer-protocol types are the JSON Schema's (server/triton_lens/viewer_protocol.schema.json, the
// one definition the Python side validates its answers against): the checked-in viewerProtocol.ts is exactly what
// the generator makes of the schema now, and the panel forwards exactly the schema's LSP methods.
import * as fs from 'fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain Node script, no type declarations
import { generate, OUT, readSchema } from '../scripts/gen-viewer-protocol.mjs';
import { PAGE_METHODS, isPageMethod } from '../src/accessMapPanel';
import { HTTP_ROUTES, LSP_METHODS } from '../src/viewerProtocol';

describe('viewerProtocol.ts', () => {
  it('is up to date with the schema (run `npm run gen-protocol` after changing it)', async () => {
    const fresh = await generate(await readSchema());
    expect(fs.readFileSync(OUT, 'utf8')).toBe(fresh);
  });

  it('changes when the schema does', async () => {
    const schema = await readSchema();
    schema.$defs.Tensor.properties.layout = { type: 'string' };
    schema.$defs.Tensor.required.push('layout');
    const changed = await generate(schema);
    expect(changed).toContain('layout: string;');
    expect(changed).not.toBe(fs.readFileSync(OUT, 'utf8'));
  });

  it('refuses schema keywords it does not understand instead of typing them as anything', async () => {
    const schema = await readSchema();
    schema.$defs.Tensor.properties.shape = { oneOf: [{ type: 'string' }] };
    await expect(generate(schema)).rejects.toThrow(/unsupported keyword oneOf/);
    const dangling = await readSchema();
    dangling.$defs.Launch.properties.tensors.items = { $ref: '#/$defs/Nowhere' };
    await expect(generate(dangling)).rejects.toThrow(/unknown \$ref/);
  });

  it('names every method of the schema, and the panel forwards its LSP ones', async () => {
    const schema = await readSchema();
    const lsp = Object.fromEntries(
      Object.entries(schema.methods as Record<string, { lsp?: string }>)
        .filter(([, e]) => e.lsp)
        .map(([m, e]) => [m, e.lsp]),
    );
    expect(LSP_METHODS).toEqual(lsp);
    expect(PAGE_METHODS).toEqual(lsp);
    expect(Object.keys(HTTP_ROUTES)).toEqual(Object.keys(schema.methods));
    expect(isPageMethod('accessMap')).toBe(true);
    expect(isPageMethod('source')).toBe(false); // the browser viewer's host page only
    expect(isPageMethod('toString')).toBe(false);
  });
});
