// Fills extension/webview/index.html's placeholders ({{nonce}}, {{cspSource}}, {{base}}); see PROTOCOL.md there.
import { randomBytes } from 'crypto';

export function makeNonce(): string {
  return (
    randomBytes(18)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 22) || 'n0nce'
  );
}

export function fillTemplate(template: string, values: { nonce: string; cspSource: string; base: string }): string {
  const base = values.base.endsWith('/') ? values.base : `${values.base}/`;
  return template
    .replace(/\{\{nonce\}\}/g, values.nonce)
    .replace(/\{\{cspSource\}\}/g, values.cspSource)
    .replace(/\{\{base\}\}/g, base);
}
