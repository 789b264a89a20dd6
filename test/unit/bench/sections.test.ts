import { describe, expect, it } from 'vitest';
import { unionMs } from '../../../bench/harness.js';
import { expand, figureProblems, SECTIONS } from '../../../bench/sections.js';

const FIGURES = ['runs.*.wallMs', 'runs.*.phasesMs.{inPortsMs,outsidePortsMs}', 'ratio.median'];
const complete = () => ({
  table: '| a |',
  runs: [
    { wallMs: 403, phasesMs: { inPortsMs: 184, outsidePortsMs: 219 } },
    { wallMs: 103, phasesMs: { inPortsMs: 57, outsidePortsMs: 46 } },
  ],
  ratio: { median: 0.7 },
});

describe('bench figures', () => {
  it('expands braces into every path', () => {
    expect(expand('a.{b,c}.{d,e}')).toEqual(['a.b.d', 'a.b.e', 'a.c.d', 'a.c.e']);
    expect(expand('a.*.b')).toEqual(['a.*.b']);
  });

  it('passes a result with every figure', () => {
    expect(figureProblems(complete(), FIGURES)).toEqual([]);
  });

  it('names a figure that is missing, and one that is not a finite number', () => {
    const result = complete();
    delete (result.runs[1] as { wallMs?: number }).wallMs;
    (result.ratio as { median: unknown }).median = null; // NaN, through JSON
    expect(figureProblems(result, FIGURES)).toEqual([
      'runs.1.wallMs: missing',
      'ratio.median: null, not a finite number',
    ]);
  });

  it('fails `*` over nothing, a missing table, and what is not an object', () => {
    expect(figureProblems({ ...complete(), runs: [] }, FIGURES)).toContain('runs.*: none');
    expect(figureProblems({ ...complete(), table: '' }, FIGURES)).toEqual(['table: missing']);
    expect(figureProblems([1], FIGURES)).toEqual(['the result is not a JSON object']);
  });

  it('fails a negative duration anywhere, as the old phase timings printed', () => {
    const result = { ...complete(), extra: { phasesMs: { other: -4667 }, totalSeconds: -1 } };
    expect(figureProblems(result, FIGURES)).toEqual([
      'extra.phasesMs.other: -4667, a negative duration',
      'extra.totalSeconds: -1, a negative duration',
    ]);
    // A difference of two durations may go below zero on a loaded machine.
    expect(figureProblems({ ...complete(), overheadPerRecordMicros: -3 }, FIGURES)).toEqual([]);
  });

  it('lists figures for every section, each path naming something', () => {
    for (const [name, section] of Object.entries(SECTIONS)) {
      expect(section.figures.length, name).toBeGreaterThan(0);
      expect(section.file).toMatch(/^bench\/[a-z-]+\.ts$/);
    }
  });
});

describe('unionMs', () => {
  it('counts overlapping spans once, so in-port time never exceeds the run', () => {
    // History saves 16 at a time: their durations add up to more than the wall time they took.
    const spans = [
      [0, 100],
      [10, 60],
      [50, 120],
      [200, 250],
      [240, 245],
    ] as const;
    const summed = spans.reduce((sum, [from, to]) => sum + (to - from), 0);
    expect(summed).toBe(275);
    expect(unionMs(spans)).toBe(170);
    expect(unionMs([])).toBe(0);
    expect(unionMs([[5, 5]])).toBe(0);
  });
});
