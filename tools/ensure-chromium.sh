#!/usr/bin/env bash
# Debian's headless Chromium for e2e/browser-client.test.ts (or CHROMIUM_PATH): installed when
# absent. Nothing is downloaded but Debian packages. Run by `npm test` and by .ci/run.
set -euo pipefail
if [ -n "${CHROMIUM_PATH:-}" ]; then exit 0; fi
exec bash "$(dirname "$0")/ensure-debian-package.sh" chromium chromium 'the browser-client test (or set CHROMIUM_PATH)'
