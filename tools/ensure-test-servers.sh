#!/usr/bin/env bash
# What the tests need from Debian beyond Chromium and kcat: PostgreSQL and Redis servers for the idempotent consumer's tests and benchmark
# (packages/idempotent-consumer, e2e/payments-effectively-once.test.ts; tools/test-servers.mjs starts them).
# Run by `npm test` and by .ci/run.
set -euo pipefail
here="$(dirname "$0")"
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  # the command check in ensure-debian-package.sh looks at PATH; Debian keeps postgres under /usr/lib/postgresql
  bash "$here/ensure-debian-package.sh" mq-no-such-command postgresql 'the PostgreSQL idempotency store tests'
fi
bash "$here/ensure-debian-package.sh" redis-server redis-server 'the Redis idempotency store tests'
# Debian's openssl: the broker's TLS tests make their own CA and certificates at run time
# (packages/broker/test/tls.test.ts); .ci/run installs it too.
bash "$here/ensure-debian-package.sh" openssl openssl "the broker's TLS tests"
