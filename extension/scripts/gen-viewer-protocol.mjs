// The extension's types of the viewer protocol, generated from its one definition, the JSON Schema
// server/triton_lens/viewer_protocol.schema.json (which the Python side validates its answers against):
//   node extension/scripts/gen-viewer-protocol.mjs      (npm run gen-protocol) writes extension/src/viewerProtocol.ts
// extension/test/viewerProtocol.test.ts fails when the checked-in file is not what this makes of the schema.
// It reads the subset of JSON Schema the file uses: type, properties, required, items, additionalProperties,
// anyOf, enum, const, $ref to #/$defs/..., description; anything else is an error, not a silent `unknown`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCHEMA = path.join(repo, 'server', 'triton_lens', 'viewer_protocol.schema.json');
export const OUT = path.join(repo, 'extension', 'src', 'viewerProtocol.ts');

const KNOWN = new Set([
  'type',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'anyOf',
  'enum',
  'const',
  '$ref',
  'description',
  'default',
  'minItems',
  'maxItems',
  'minLength',
]);
const SCALAR = { integer: 'number', number: 'number', string: 'string', boolean: 'boolean', null: 'null' };

function comment(text) {
  return text ? `/** ${text.replace(/\*\//g, '*\\/')} */\n` : '';
}

function typeOf(s, where, defs) {
  for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`${where}: unsupported keyword ${k}`);
  if (s.$ref) {
    const name = s.$ref.replace(/^#\/\$defs\//, '');
    if (name === s.$ref || !(name in defs)) throw new Error(`${where}: unknown $ref ${s.$ref}`);
    return name;
  }
  if (s.anyOf) return s.anyOf.map((x, i) => typeOf(x, `${where}.anyOf[${i}]`, defs)).join(' | ');
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.type)) return s.type.map((t) => typeOf({ ...s, type: t }, where, defs)).join(' | ');
  if (s.type in SCALAR) return SCALAR[s.type];
  if (s.type === 'array') {
    if (!s.items) throw new Error(`${where}: an array without items`);
    const item = typeOf(s.items, `${where}[]`, defs);
    return isUnion(s.items) ? `(${item})[]` : `${item}[]`;
  }
  if (s.type === 'object') {
    const props = s.properties ?? {};
    const required = new Set(s.required ?? []);
    for (const r of required) if (!(r in props)) throw new Error(`${where}: required ${r} is not a property`);
    const fields = Object.entries(props).map(
      ([k, v]) =>
        `${comment(v.description)}${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}${required.has(k) ? '' : '?'}: ${typeOf(v, `${where}.${k}`, defs)};`,
    );
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      fields.push(`[key: string]: ${typeOf(s.additionalProperties, `${where}.*`, defs)};`);
    return fields.length ? `{\n${fields.join('\n')}\n}` : 'Record<string, never>';
  }
  throw new Error(`${where}: no type`);
}

function isUnion(s) {
  return Boolean(s.anyOf || (s.enum && s.enum.length > 1) || Array.isArray(s.type));
}

/** An exported interface or type for each of a schema's $defs (shared with gen-lsp-messages.mjs). */
export function declarations(defs) {
  return Object.entries(defs).map(([name, s]) => {
    const t = typeOf(s, name, defs);
    const declared =
      s.type === 'object' && t.startsWith('{') ? `export interface ${name} ${t}` : `export type ${name} = ${t};`;
    return `${comment(s.description)}${declared}`;
  });
}

/** The TypeScript module for a schema (prettier-formatted as the repository formats its code). */
export async function generate(schema) {
  const defs = schema.$defs;
  const parts = [
    '// Generated from server/triton_lens/viewer_protocol.schema.json by extension/scripts/gen-viewer-protocol.mjs:\n' +
      '// do not edit (npm run gen-protocol rewrites it; extension/test/viewerProtocol.test.ts fails when it is stale).',
    ...declarations(defs),
  ];
  const methods = Object.entries(schema.methods);
  const ref = (p) => {
    const name = p.replace(/^#\/\$defs\//, '');
    if (!(name in defs)) throw new Error(`methods: unknown ${p}`);
    return name;
  };
  parts.push(
    `/** Every method of the viewer service: its params and its answer. */\nexport interface ViewerMethods {\n${methods
      .map(([m, e]) => `${m}: { params: ${ref(e.params)}; result: ${ref(e.result)} };`)
      .join('\n')}\n}`,
    'export type ViewerMethod = keyof ViewerMethods;\n' +
      'export type ViewerParams<M extends ViewerMethod> = ViewerMethods[M]["params"];\n' +
      'export type ViewerResult<M extends ViewerMethod> = ViewerMethods[M]["result"];',
    `/** The methods the language server answers, with their LSP request names. */\nexport const LSP_METHODS = {\n${methods
      .filter(([, e]) => e.lsp)
      .map(([m, e]) => `${m}: ${JSON.stringify(e.lsp)},`)
      .join('\n')}\n} as const;`,
    'export type LspMethod = keyof typeof LSP_METHODS;',
    `/** The HTTP routes of the browser viewer. */\nexport const HTTP_ROUTES = {\n${methods.map(([m, e]) => `${m}: ${JSON.stringify(e.http)},`).join('\n')}\n} as const;`,
  );
  return formatted(parts, OUT);
}

/** The parts as one prettier-formatted module, as the repository formats its code. */
export async function formatted(parts, out) {
  const text = parts.join('\n\n') + '\n';
  const options = (await prettier.resolveConfig(out)) ?? {};
  return prettier.format(text, { ...options, filepath: out });
}

export async function readSchema() {
  return JSON.parse(fs.readFileSync(SCHEMA, 'utf8'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  fs.writeFileSync(OUT, await generate(await readSchema()));
  console.log(`wrote ${path.relative(repo, OUT)}`);
}
