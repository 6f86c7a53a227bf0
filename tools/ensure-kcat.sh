#!/usr/bin/env bash
# Debian's kcat (librdkafka) for the Kafka listener's tests (packages/broker/test/kafka-kcat.test.ts):
# installed when absent (as root, or through sudo). Nothing is downloaded but Debian packages.
# Run by `npm test` and by .ci/run.
set -euo pipefail
if command -v kcat >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y kcat
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y kcat
else
  echo "kcat is not installed and this user cannot install it: apt-get install -y kcat; the kcat tests will fail" >&2
fi
