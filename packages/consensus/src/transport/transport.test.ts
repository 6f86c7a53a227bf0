import { raftTransportCompliance } from './compliance.js';
import { MemoryNetwork } from './memory-transport.js';
import { createWsTransport, type WsTransport } from './ws-transport.js';

raftTransportCompliance('MemoryNetwork', {
  create: async (ids) => {
    const net = new MemoryNetwork();
    return new Map(ids.map((id) => [id, net.transport(id)]));
  },
});

raftTransportCompliance('WebSocket', {
  create: async (ids) => {
    const ts = new Map<number, WsTransport>();
    for (const id of ids) ts.set(id, await createWsTransport({ id, clusterId: 'compliance', reconnectMs: 10 }));
    for (const [id, t] of ts) for (const [pid, pt] of ts) if (pid !== id) t.addPeer(pid, `ws://127.0.0.1:${pt.port}`);
    return ts;
  },
});
