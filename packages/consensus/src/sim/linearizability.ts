/**
 * Linearizability check of a key-value history (Wing & Gong search with
 * memoisation, as in Porcupine), run per key since a register per key is
 * independent. An operation whose outcome is unknown (timed out, node
 * crashed) may take effect at any point after its call, or never.
 */
export interface KvOp {
  client: number;
  key: string;
  kind: 'put' | 'get';
  /** put: the value written; get: the value read (null = absent). */
  value: string | null;
  call: number;
  /** Return time; Infinity when the outcome is unknown. */
  ret: number;
  /** false: the outcome is unknown (only meaningful for puts; unknown gets are dropped). */
  ok: boolean;
}

export interface LinearizabilityResult {
  ok: boolean;
  key?: string;
  ops?: KvOp[];
}

export function checkKvHistory(history: KvOp[], limitStates = 2_000_000): LinearizabilityResult {
  const byKey = new Map<string, KvOp[]>();
  for (const op of history) {
    if (op.kind === 'get' && !op.ok) continue;
    let list = byKey.get(op.key);
    if (!list) byKey.set(op.key, (list = []));
    list.push(op);
  }
  for (const [key, ops] of byKey) {
    if (!checkRegister(ops, limitStates)) return { ok: false, key, ops };
  }
  return { ok: true };
}

function checkRegister(ops: KvOp[], limitStates: number): boolean {
  const n = ops.length;
  if (n === 0) return true;
  // Unknown-outcome puts may also never happen: model that by letting the search skip them at the end.
  const words = Math.ceil(n / 32);
  const seen = new Set<string>();
  let explored = 0;
  const done = new Uint32Array(words);
  const isDone = (i: number) => (done[i >>> 5]! & (1 << (i & 31))) !== 0;
  const set = (i: number, v: boolean) => {
    if (v) done[i >>> 5]! |= 1 << (i & 31);
    else done[i >>> 5]! &= ~(1 << (i & 31));
  };
  const order = ops.map((_, i) => i).sort((a, b) => ops[a]!.call - ops[b]!.call);

  const search = (state: string | null, remainingKnown: number): boolean => {
    if (remainingKnown === 0) return true;
    if (++explored > limitStates) throw new Error(`linearizability search exceeded ${limitStates} states`);
    const key = `${state}|${Array.from(done).join(',')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    // The earliest return among pending ops bounds which ops may go next.
    let minRet = Infinity;
    for (const i of order) if (!isDone(i) && ops[i]!.ret < minRet) minRet = ops[i]!.ret;
    for (const i of order) {
      if (isDone(i)) continue;
      const op = ops[i]!;
      if (op.call > minRet) break;
      let next: string | null;
      if (op.kind === 'put') next = op.value;
      else {
        if (op.value !== state) continue;
        next = state;
      }
      set(i, true);
      if (search(next, remainingKnown - (op.ok ? 1 : 0))) return true;
      set(i, false);
    }
    return false;
  };
  const known = ops.filter((o) => o.ok).length;
  return search(null, known);
}
