import type { Logger } from '@mq/protocol/components';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string | undefined;
  obj: Record<string, unknown>;
}

/** A pino-shaped logger that keeps every line, for tests that check what the client logs. */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];
  debug(obj: object, msg?: string): void {
    this.lines.push({ level: 'debug', msg, obj: obj as Record<string, unknown> });
  }
  info(obj: object, msg?: string): void {
    this.lines.push({ level: 'info', msg, obj: obj as Record<string, unknown> });
  }
  warn(obj: object, msg?: string): void {
    this.lines.push({ level: 'warn', msg, obj: obj as Record<string, unknown> });
  }
  error(obj: object, msg?: string): void {
    this.lines.push({ level: 'error', msg, obj: obj as Record<string, unknown> });
  }
  find(level: LogLine['level'], msg: RegExp): LogLine | undefined {
    return this.lines.find((l) => l.level === level && msg.test(l.msg ?? ''));
  }
}
