// Lint for the extension (TypeScript) and the webview page (plain browser JavaScript, also type-checked
// by tsconfig.webview.json). Formatting is prettier's job (.prettierrc.json), not eslint's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'out/**',
      'node_modules/**',
      '**/node_modules/**',
      'bundled/**',
      '.real-vscode/**',
      'tests/**/artifacts/**',
    ],
  },
  {
    files: ['extension/src/**/*.ts', 'extension/test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['extension/webview/**/*.js', 'server/triton_lens/viz/static/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.browser, acquireVsCodeApi: 'readonly' }, sourceType: 'module' },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] },
  },
  {
    // Node scripts; the tests' also hold functions that Playwright runs inside the page (browser globals).
    files: ['extension/*.mjs', 'extension/scripts/**/*.mjs', 'tests/**/*.mjs', '*.mjs', '*.mts'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node, ...globals.browser }, sourceType: 'module' },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] },
  },
);
