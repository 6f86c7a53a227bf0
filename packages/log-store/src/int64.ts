/** Big-endian int64 as a JavaScript number (values stay below 2^53). */
export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
}

export function writeInt64(buf: Buffer, pos: number, value: number): void {
  const hi = Math.floor(value / 0x1_0000_0000);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(value - hi * 0x1_0000_0000, pos + 4);
}
