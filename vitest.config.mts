import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  resolve: {
    alias: { vscode: fileURLToPath(new URL('./extension/test/vscode.mock.ts', import.meta.url)) },
  },
  test: {
    include: ['extension/test/**/*.test.ts'],
    environment: 'node',
  },
});
