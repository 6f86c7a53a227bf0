/** Broker counters for GET /metrics (Prometheus text). Plain numbers: no allocation on the hot path beyond a map lookup. */
export class BrokerMetrics {
  readonly requests = new Map<string, number>();
  readonly refused = new Map<string, number>();
  badFrames = 0;
  connectionsAccepted = 0;
  bytesIn = 0;
  bytesOut = 0;

  request(api: string): void {
    this.requests.set(api, (this.requests.get(api) ?? 0) + 1);
  }

  refusal(code: string): void {
    this.refused.set(code, (this.refused.get(code) ?? 0) + 1);
  }

  render(): string[] {
    const lines = [
      '# HELP mq_requests_total Requests started, by API.',
      '# TYPE mq_requests_total counter',
      ...[...this.requests].map(([api, n]) => `mq_requests_total{api="${api}"} ${n}`),
      '# HELP mq_request_errors_total Whole requests refused, by error code.',
      '# TYPE mq_request_errors_total counter',
      ...[...this.refused].map(([code, n]) => `mq_request_errors_total{code="${code}"} ${n}`),
      '# HELP mq_bad_frames_total Frames that closed their connection (undecodable, text, too large).',
      '# TYPE mq_bad_frames_total counter',
      `mq_bad_frames_total ${this.badFrames}`,
      '# HELP mq_connections_accepted_total WebSocket connections accepted.',
      '# TYPE mq_connections_accepted_total counter',
      `mq_connections_accepted_total ${this.connectionsAccepted}`,
      '# HELP mq_frame_bytes_in_total Request frame bytes received.',
      '# TYPE mq_frame_bytes_in_total counter',
      `mq_frame_bytes_in_total ${this.bytesIn}`,
      '# HELP mq_frame_bytes_out_total Response frame bytes sent.',
      '# TYPE mq_frame_bytes_out_total counter',
      `mq_frame_bytes_out_total ${this.bytesOut}`,
      '# HELP process_resident_memory_bytes Resident memory of the broker process.',
      '# TYPE process_resident_memory_bytes gauge',
      `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
    ];
    return lines;
  }
}
