#!/usr/bin/env bash
# Debian's PostgreSQL and Redis servers for the idempotent consumer's tests and benchmark
# (packages/idempotent-consumer, e2e/payments-effectively-once.test.ts; tools/test-servers.mjs starts them).
# Run by `npm test` and by .ci/run.
set -euo pipefail
here="$(dirname "$0")"
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  # the command check in ensure-debian-package.sh looks at PATH; Debian keeps postgres under /usr/lib/postgresql
  bash "$here/ensure-debian-package.sh" mq-no-such-command postgresql 'the PostgreSQL idempotency store tests'
fi
bash "$here/ensure-debian-package.sh" redis-server redis-server 'the Redis idempotency store tests'
