// Kafka's default partitioner for keyed records (Java's Utils.murmur2 + toPositive), so a key
// lands on the same partition whether it is produced by Tally, the Java client or REST Proxy.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const fours = length >> 2;
  for (let i = 0; i < fours; i++) {
    const o = i * 4;
    let k =
      (data[o] as number) |
      ((data[o + 1] as number) << 8) |
      ((data[o + 2] as number) << 16) |
      ((data[o + 3] as number) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = fours * 4;
  const rest = length & 3;
  if (rest === 3) h ^= (data[tail + 2] as number) << 16;
  if (rest >= 2) h ^= (data[tail + 1] as number) << 8;
  if (rest >= 1) {
    h ^= data[tail] as number;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition Kafka's default partitioner picks for a non-null key. */
export function partitionForKey(key: Uint8Array, partitionCount: number): number {
  return (murmur2(key) & 0x7fffffff) % partitionCount;
}
