// `make demo`: a real VS Code (code-server) on 127.0.0.1 with the built .vsix installed and examples/ open.
//   node tests/e2e/demo.mjs [triton-lens.vsix]      PORT=8080 by default (another free port when taken)
// Also installs the .vsix into a local `code` when there is one on PATH. Ctrl+C stops the server.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { loadEnv, REPO, startCodeServer } from './lib/codeServer.mjs';

const vsix = path.resolve(REPO, process.argv[2] || 'triton-lens.vsix');
const examples = path.join(REPO, 'examples');
const python = process.env.TRITON_LENS_PYTHON || path.join(REPO, '.venv', 'bin', 'python');

async function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer().once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

if (!fs.existsSync(vsix)) {
  console.error(`${vsix} is missing: run make vsix`);
  process.exit(1);
}
if (spawnSync('sh', ['-c', 'command -v code'], { encoding: 'utf8' }).stdout.trim()) {
  try {
    execFileSync('code', ['--install-extension', vsix, '--force'], { stdio: 'inherit', timeout: 120000 });
    console.log(`Installed ${path.basename(vsix)} into the local VS Code (code).`);
  } catch (e) {
    console.warn(`Could not install into the local VS Code: ${e.message}`);
  }
}

const env = loadEnv();
const wanted = Number(process.env.PORT || 8080);
const port = (await portFree(wanted)) ? wanted : undefined;
const cs = await startCodeServer({
  env,
  dir: path.join(REPO, '.e2e', 'demo'),
  vsix,
  settings: { 'workbench.colorTheme': process.env.DEMO_THEME || 'Default Dark Modern' },
  machineSettings: { 'tritonLens.python': python },
  port,
});
const url = `${cs.url}/?folder=${encodeURIComponent(examples)}`;
console.log(`\nTriton Lens demo: VS Code with the extension and examples/ is at\n\n    ${url}\n`);
console.log(`(Python: ${python}; code-server log: ${cs.logFile}). Ctrl+C to stop.`);
const stop = async () => {
  await cs.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
cs.child.on('exit', (code) => {
  console.error(`code-server exited (${code}); log: ${cs.logFile}`);
  process.exit(code ?? 1);
});
