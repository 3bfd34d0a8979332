// Starts a real VS Code (code-server, installed by tests/e2e/setup.sh) with a fresh profile, the extension
// .vsix installed, and given settings; and a headless Chromium (Debian's) driven by playwright-core.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Reads <root>/env.sh (written by setup.sh): NODE24, CODE_SERVER_ENTRY, CHROMIUM, E2E_NODE_MODULES. */
export function loadEnv(root = process.env.REAL_VSCODE_ROOT || path.join(REPO, '.real-vscode')) {
  const file = path.join(root, 'env.sh');
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run tests/e2e/setup.sh first`);
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export (\w+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let v = m[2];
    const def = /^\$\{\w+:-(.*)\}$/.exec(v); // ${CHROMIUM:-/usr/bin/chromium}
    if (def) v = process.env[m[1]] || def[1];
    env[m[1]] = v;
  }
  for (const k of ['NODE24', 'CODE_SERVER_ENTRY', 'CHROMIUM', 'E2E_NODE_MODULES']) {
    if (!env[k]) throw new Error(`${file} does not set ${k}`);
  }
  return env;
}

export function playwright(env) {
  const require = createRequire(path.join(env.E2E_NODE_MODULES, 'x.js'));
  return require('playwright-core');
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * A fresh code-server: own HOME, user data and extensions folders under `dir`, `vsix` installed, `settings`
 * in the user settings.json and `machineSettings` in the machine's (the server side's), listening on 127.0.0.1.
 * trustAll=false turns workspace trust on: a folder opened for the first time is in Restricted Mode. Returns {url, port, stop(), logFile, dir}.
 */
export async function startCodeServer({
  env,
  dir,
  vsix,
  settings = {},
  machineSettings = {},
  port,
  extraArgs = [],
  trustAll = true,
}) {
  fs.rmSync(dir, { recursive: true, force: true });
  const home = path.join(dir, 'home');
  const userData = path.join(dir, 'user-data');
  const extensions = path.join(dir, 'extensions');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  // settings of machine scope (like tritonLens.python) are read from the remote's Machine settings
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(machineSettings, null, 2));
  fs.mkdirSync(extensions, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'extensions.ignoreRecommendations': true,
        'update.mode': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'chat.disableAIFeatures': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'editor.inlayHints.enabled': 'on',
        'editor.minimap.enabled': false,
        'git.enabled': false,
        'security.workspace.trust.enabled': !trustAll,
        'security.workspace.trust.startupPrompt': 'never',
        ...settings,
      },
      null,
      2,
    ),
  );
  const procEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
  };
  delete procEnv.VSCODE_IPC_HOOK_CLI;
  const cs = (args, opts = {}) => [
    env.NODE24,
    [env.CODE_SERVER_ENTRY, '--user-data-dir', userData, '--extensions-dir', extensions, ...args],
    { env: procEnv, ...opts },
  ];
  if (vsix) {
    const [cmd, args, opts] = cs(['--install-extension', vsix]);
    execFileSync(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000 });
  }
  port ??= await freePort();
  const logFile = path.join(dir, 'code-server.log');
  const log = fs.openSync(logFile, 'w');
  const [cmd, args, opts] = cs([
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    ...(trustAll ? ['--disable-workspace-trust'] : []),
    '--disable-getting-started-override',
    ...extraArgs,
  ]);
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`code-server exited (${child.exitCode}):\n${fs.readFileSync(logFile, 'utf8')}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer on ${url}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port,
    dir,
    userData,
    extensions,
    logFile,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          r();
        }, 5000);
        child.once('exit', () => {
          clearTimeout(t);
          r();
        });
      });
    },
  };
}

/** Headless Chromium with a fresh profile (playwright-core, the system's chromium binary). */
export async function launchBrowser(env) {
  const { chromium } = playwright(env);
  return chromium.launch({
    executablePath: env.CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

/** Every file of the extension's output channel logs (exthost/<n>-Triton Lens.log), concatenated. */
export function extensionLogs(userData) {
  const out = [];
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Triton Lens\.log$|exthost\.log$/.test(e.name)) out.push(`==== ${p}\n${fs.readFileSync(p, 'utf8')}`);
    }
  };
  walk(path.join(userData, 'logs'));
  return out.join('\n');
}
