// The extension's types of Triton Lens's own LSP messages (the custom requests and the run notifications),
// generated from their one definition, the JSON Schema server/triton_lens/lsp_messages.schema.json, which the
// server's tests validate what it sends against:
//   node extension/scripts/gen-lsp-messages.mjs      (npm run gen-protocol) writes extension/src/lspMessages.ts
// extension/test/lspMessages.test.ts fails when the checked-in file is not what this makes of the schema.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { declarations, formatted } from './gen-viewer-protocol.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCHEMA = path.join(repo, 'server', 'triton_lens', 'lsp_messages.schema.json');
export const OUT = path.join(repo, 'extension', 'src', 'lspMessages.ts');

/** The TypeScript module for the messages' schema. */
export async function generate(schema) {
  const defs = schema.$defs;
  const ref = (where, p) => {
    const name = typeof p === 'string' ? p.replace(/^#\/\$defs\//, '') : '';
    if (!(name in defs)) throw new Error(`${where}: unknown ${p}`);
    return name;
  };
  const requests = Object.entries(schema.requests);
  const notifications = Object.entries(schema.notifications);
  for (const [name, e] of [...requests, ...notifications])
    if (!/^tritonLens\/[a-zA-Z]+$/.test(e.method ?? '')) throw new Error(`${name}: method must be tritonLens/<name>`);
  const parts = [
    '// Generated from server/triton_lens/lsp_messages.schema.json by extension/scripts/gen-lsp-messages.mjs:\n' +
      '// do not edit (npm run gen-protocol rewrites it; extension/test/lspMessages.test.ts fails when it is stale).',
    ...declarations(defs),
    `/** The requests the extension sends the server: their params and their answer. */\nexport interface LspRequests {\n${requests
      .map(([m, e]) => `${m}: { params: ${ref(m, e.params)}; result: ${ref(m, e.result)} };`)
      .join('\n')}\n}`,
    `/** The notifications the server sends the extension, and their params. */\nexport interface LspNotifications {\n${notifications
      .map(([m, e]) => `${m}: ${ref(m, e.params)};`)
      .join('\n')}\n}`,
    `/** The requests' LSP method names. */\nexport const LSP_REQUESTS = {\n${requests
      .map(([m, e]) => `${m}: ${JSON.stringify(e.method)},`)
      .join('\n')}\n} as const;`,
    `/** The notifications' LSP method names. */\nexport const LSP_NOTIFICATIONS = {\n${notifications
      .map(([m, e]) => `${m}: ${JSON.stringify(e.method)},`)
      .join('\n')}\n} as const;`,
  ];
  return formatted(parts, OUT);
}

export async function readSchema() {
  return JSON.parse(fs.readFileSync(SCHEMA, 'utf8'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  fs.writeFileSync(OUT, await generate(await readSchema()));
  console.log(`wrote ${path.relative(repo, OUT)}`);
}
