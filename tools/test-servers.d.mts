export interface TestServer {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres or redis://127.0.0.1:PORT */
  url: string;
  /** What the server printed so far. */
  output(): string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}
/** The newest Debian PostgreSQL's bin directory, or null when none is installed. */
export function postgresBinDir(): string | null;
export function startPostgres(options?: { maxConnections?: number; synchronousCommit?: boolean }): Promise<TestServer>;
export function startRedis(): Promise<TestServer>;
