#!/bin/bash
# usage: tools/measure/measure.sh <command...>
# One measurement at a time (holds /tmp/mq-measure.lock) at nice -10, absolute: pair it with renice-loop.sh, which
# keeps every other ordinary process at nice 19 and switches the kernel's autogroups off (see docs/measuring.md).
exec flock /tmp/mq-measure.lock bash -c 'renice -n -10 -p $$ >/dev/null; exec "$@"' _ "$@"
