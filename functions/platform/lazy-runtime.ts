/**
 * A function's composition root, built on first use and shared by every warm invocation of the
 * container; a failed build is forgotten, so the next invocation builds it again.
 */
export function lazyRuntime<T>(build: () => Promise<T>): () => Promise<T> {
  let runtime: Promise<T> | undefined;
  return () => {
    runtime ??= build().catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    return runtime;
  };
}
