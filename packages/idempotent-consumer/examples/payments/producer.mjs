#!/usr/bin/env node
// The payments producer: sends payments pay-<from>..pay-<from+count-1>, keyed and headed by payment id, and
// "retries" like a producer that could not confirm a send: each payment is sent again with probability
// --duplicates (a duplicate at another offset, which only the payment-id key can catch).
//
//   node producer.mjs --bootstrap 127.0.0.1:9092 [--topic payments] [--count 1000] [--from 0] [--duplicates 0.2]
import { parseArgs } from 'node:util';
import { MqClient } from '@mq/client';

const { values: args } = parseArgs({
  options: {
    bootstrap: { type: 'string', default: '127.0.0.1:9092' },
    topic: { type: 'string', default: 'payments' },
    count: { type: 'string', default: '1000' },
    from: { type: 'string', default: '0' },
    duplicates: { type: 'string', default: '0.2' },
  },
});
const count = Number(args.count);
const from = Number(args.from);
const dupRate = Number(args.duplicates);

const mq = new MqClient({ bootstrap: args.bootstrap, clientId: 'payments-producer' });
const producer = mq.producer({ acks: 'all', lingerMs: 5 });
const sends = [];
let sent = 0;
for (let i = from; i < from + count; i++) {
  const id = `pay-${i}`;
  const record = { key: id, value: JSON.stringify({ paymentId: id, amountCents: 100 + (i % 900) }), headers: { 'payment-id': id } };
  sends.push(producer.send(args.topic, record));
  sent++;
  if (Math.random() < dupRate) {
    sends.push(producer.send(args.topic, record));
    sent++;
  }
}
await Promise.all(sends);
await producer.close();
await mq.close();
console.log(JSON.stringify({ payments: count, sent }));
