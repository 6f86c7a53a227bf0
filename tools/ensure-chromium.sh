#!/usr/bin/env bash
# Debian's headless Chromium for e2e/browser-client.test.ts: installed when
# absent (as root, or through sudo). Nothing is downloaded but Debian packages.
# Run by `npm test` and by .ci/run.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
else
  echo "chromium is not installed and this user cannot install it: apt-get install -y chromium (or set CHROMIUM_PATH); the browser-client test will fail" >&2
fi
