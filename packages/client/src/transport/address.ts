/** The WebSocket URL for a bootstrap or broker address (`host:port`, or a ws:// URL as is). */
export function addressToUrl(address: string, tls = false): string {
  if (/^wss?:\/\//.test(address)) return address;
  return `${tls ? 'wss' : 'ws'}://${address}`;
}
