#!/usr/bin/env bash
# From a fresh clone to a working gpuhash in one command: installs what this machine lacks,
# builds the workspace and runs the main job: the benchmark's quick suite (`--no-run` skips it).
#   - Node.js >= 20.19 must be present (https://nodejs.org, or your distribution's nodejs package).
#   - pnpm, pinned to the version in package.json's "packageManager", is installed with npm.
#   - Debian/Ubuntu: the Vulkan loader and Chromium come from apt. Chromium brings the SwiftShader
#     Vulkan driver (WebGPU on the CPU, used when there is no GPU) and is the browser the docs
#     site's tests drive.
#   - Other systems: install your GPU vendor's Vulkan (Linux), Metal (macOS) or D3D12 (Windows)
#     driver; nothing else is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
run_main=1
[ "${1:-}" = "--no-run" ] && run_main=0
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# Node
if ! command -v node >/dev/null 2>&1; then
  echo "setup: Node.js is not installed. Install Node.js 20.19 or newer (https://nodejs.org) and run again." >&2
  exit 1
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' || {
  echo "setup: Node.js $(node --version) is too old; gpuhash needs 20.19 or newer." >&2
  exit 1
}

# Vulkan loader and a Vulkan driver (Linux with apt only).
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  missing=""
  dpkg -s libvulkan1 >/dev/null 2>&1 || missing="libvulkan1"
  if [ ! -x /usr/bin/chromium ] || [ ! -f /usr/lib/chromium/vk_swiftshader_icd.json ]; then
    missing="$missing chromium"
  fi
  if [ -n "$missing" ]; then
    say "installing with apt:$missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi
elif [ "$(uname -s)" = "Linux" ]; then
  echo "setup: not a Debian/Ubuntu system: install the Vulkan loader (libvulkan) and your GPU's Vulkan driver yourself." >&2
fi

# pnpm at the pinned version
want=$(node -p 'require("./package.json").packageManager.split("@")[1]')
if [ "$(pnpm --version 2>/dev/null || true)" != "$want" ]; then
  say "installing pnpm $want"
  npm install -g --silent "pnpm@$want" >/dev/null 2>&1 || npm install -g "pnpm@$want"
  hash -r
fi

say "installing dependencies (locked)"
pnpm install --frozen-lockfile --reporter=append-only 2>&1 | grep -vE '^(Progress|Packages:)' || true
test -d node_modules/.pnpm || { echo "setup: pnpm install failed" >&2; exit 1; }

say "building"
TURBO_TELEMETRY_DISABLED=1 pnpm -s build --output-logs=errors-only

if [ "$run_main" = 1 ]; then
  say "running the benchmark's quick suite (every table and workload, small sizes; about 20 s without a GPU)"
  pnpm -s bench
fi
