/** Whether `port` can be bound on 127.0.0.1 right now. */
export function portFree(port: number): Promise<boolean>;
/** A base port with `count` consecutive ports free after it. */
export function freePortRange(count?: number): Promise<number>;
/** A TCP port on 127.0.0.1, outside the ephemeral range, that was free a moment ago. */
export function freePort(): Promise<number>;
