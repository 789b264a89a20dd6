/**
 * Caches `value` under `key` (forgetting the oldest entry past `maxEntries`), and drops it again
 * if `settled` rejects, so that the next call asks the registry afresh.
 */
export function remember<K, V>(
  cache: Map<K, V>,
  key: K,
  value: V,
  settled: Promise<unknown>,
  maxEntries: number,
): void {
  if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as K);
  cache.set(key, value);
  settled.catch(() => {
    if (cache.get(key) === value) cache.delete(key);
  });
}
