/**
 * Raft messages on the wire: the protobuf Envelope both transports carry
 * (the WebSocket transport between processes, the simulator's network in
 * @mq/sim), so every Raft message a simulated voter sends runs this codec.
 */
import { raft as pb } from '../gen/raft.js';
import type { Entry, EntryType, Message, MessageType } from '../core/types.js';

export function toWire(m: Message): pb.IMessage {
  return {
    type: m.type,
    to: m.to,
    from: m.from,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    entries: m.entries.map((e) => ({ term: e.term, index: e.index, type: e.type, data: e.data })),
    commit: m.commit,
    reject: m.reject,
    rejectHint: m.rejectHint,
    context: m.context,
    snapshot: m.snapshot
      ? { index: m.snapshot.index, term: m.snapshot.term, size: m.snapshot.size, confState: { voters: m.snapshot.confState.voters, learners: m.snapshot.confState.learners } }
      : null,
    snapOffset: m.snapOffset,
    snapData: m.snapData,
    snapDone: m.snapDone,
  };
}

export function fromWire(w: pb.IMessage): Message {
  const entries: Entry[] = (w.entries ?? []).map((e) => ({
    term: Number(e.term ?? 0),
    index: Number(e.index ?? 0),
    type: (e.type ?? 0) as EntryType,
    data: e.data ?? new Uint8Array(0),
  }));
  const m: Message = {
    type: (w.type ?? 0) as MessageType,
    to: Number(w.to ?? 0),
    from: Number(w.from ?? 0),
    term: Number(w.term ?? 0),
    logTerm: Number(w.logTerm ?? 0),
    index: Number(w.index ?? 0),
    entries,
    commit: Number(w.commit ?? 0),
    reject: Boolean(w.reject),
    rejectHint: Number(w.rejectHint ?? 0),
    context: w.context ?? new Uint8Array(0),
    snapOffset: Number(w.snapOffset ?? 0),
    snapData: w.snapData ?? new Uint8Array(0),
    snapDone: Boolean(w.snapDone),
  };
  if (w.snapshot) {
    m.snapshot = {
      index: Number(w.snapshot.index ?? 0),
      term: Number(w.snapshot.term ?? 0),
      size: Number(w.snapshot.size ?? 0),
      confState: { voters: (w.snapshot.confState?.voters ?? []).map(Number), learners: (w.snapshot.confState?.learners ?? []).map(Number) },
    };
  }
  return m;
}

/** One frame of messages, as the WebSocket transport sends it. */
export function encodeEnvelope(messages: readonly Message[]): Uint8Array {
  return pb.Envelope.encode({ messages: messages.map(toWire) }).finish();
}

/** The messages of a frame from encodeEnvelope (throws on bytes that are not an Envelope). */
export function decodeEnvelope(bytes: Uint8Array): Message[] {
  return (pb.Envelope.decode(bytes).messages ?? []).map(fromWire);
}
