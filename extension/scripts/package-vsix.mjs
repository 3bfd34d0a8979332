// Makes triton-lens.vsix from a staging folder that holds only what the installed extension needs (the same
// allowlist as .vscodeignore): vsce then has a few hundred files to look at instead of the whole repository
// (.venv, node_modules), which takes it seconds instead of half a minute.
//   node extension/scripts/package-vsix.mjs [out.vsix]     (run `npm run build -- --production` and bundle-libs first)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.resolve(repo, process.argv[2] ?? 'triton-lens.vsix');
const stage = path.join(repo, 'build', 'vsix');

const required = [
  'dist/extension.js',
  'extension/webview/index.html',
  'extension/webview/viewer.js',
  'bundled/libs/pygls',
  'server/triton_lens/__main__.py',
];
for (const f of required) {
  if (!fs.existsSync(path.join(repo, f))) {
    console.error(`package-vsix: ${f} is missing (run: make vsix)`);
    process.exit(1);
  }
}

fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
const skip = (src) => /(^|[\\/])(__pycache__|\.pytest_cache)([\\/]|$)|\.py[co]$|\.requirements\.sha256$/.test(src);
const copy = (rel, filter = () => true) => {
  const src = path.join(repo, rel);
  if (!fs.existsSync(src)) return;
  fs.cpSync(src, path.join(stage, rel), { recursive: true, filter: (s) => !skip(s) && filter(s) });
};
copy('dist/extension.js');
copy('extension/webview', (s) => fs.statSync(s).isDirectory() || /\.(html|js|css|md)$/.test(s));
copy('extension/resources');
copy('bundled/libs');
copy('server/triton_lens');
for (const f of ['LICENSE', 'LICENSE.md', 'CHANGELOG.md']) copy(f);
// the extension's own README (the project README links into the repository, which a .vsix cannot)
fs.copyFileSync(path.join(repo, 'extension', 'README.md'), path.join(stage, 'README.md'));

// The page is ES modules that import each other: one left out of the package leaves the installed
// view blank, with nothing but a console error. Follow the imports from the entry in the staged copy.
const page = path.join(stage, 'extension', 'webview');
const seen = new Set();
for (const todo = ['viewer.js']; todo.length;) {
  const f = todo.pop();
  if (seen.has(f)) continue;
  seen.add(f);
  if (!fs.existsSync(path.join(page, f))) {
    console.error(`package-vsix: the page imports extension/webview/${f}, which the package would not hold`);
    process.exit(1);
  }
  const text = fs.readFileSync(path.join(page, f), 'utf8');
  for (const m of text.matchAll(/^import [^;]*? from '\.\/([\w.-]+)';/gms)) todo.push(m[1]);
}

const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
delete pkg.scripts;
delete pkg.devDependencies;
delete pkg.dependencies; // bundled into dist/extension.js by esbuild
fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
fs.writeFileSync(path.join(stage, '.vscodeignore'), '**/__pycache__/**\n**/*.pyc\n');
const vsce = path.join(repo, 'node_modules', '@vscode', 'vsce', 'vsce');
const args = [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', out];
execFileSync(process.execPath, args, { cwd: stage, stdio: 'inherit' });
