#!/usr/bin/env bash
# Debian's kcat (librdkafka) for the Kafka listener's tests (packages/broker/test/kafka-kcat.test.ts).
# Run by `npm test` and by .ci/run.
exec bash "$(dirname "$0")/ensure-debian-package.sh" kcat kcat 'the kcat tests'
