import { vi } from 'vitest';

export type EmfBlob = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string }> }> };
};

/** The EMF documents `publish` writes (Powertools writes them to stdout or console.log). */
export function emittedMetrics(publish: () => void): EmfBlob[] {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    publish();
  } finally {
    vi.restoreAllMocks();
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.includes('_aws'))
    .map((l) => JSON.parse(l) as EmfBlob);
}

/** The documents holding metric `name`. */
export const withMetric = (blobs: readonly EmfBlob[], name: string) =>
  blobs.filter((b) => b._aws.CloudWatchMetrics[0]?.Metrics.some((m) => m.Name === name));
