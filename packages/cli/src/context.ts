/** What every command gets: where to read and write, the environment, and a signal for Ctrl-C. */
import type { Readable, Writable } from 'node:stream';

export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

export interface CliContext extends CliIo {
  /** Aborted on SIGINT/SIGTERM: long-running commands stop cleanly. */
  signal: AbortSignal;
}

/** Writes a line to a stream and waits when it is full (stdout piped into a slow reader). */
export function writeLine(out: Writable, line: string): Promise<void> | void {
  if (!out.write(`${line}\n`)) return new Promise((resolve) => out.once('drain', resolve));
}
