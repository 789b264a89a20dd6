// Map states in DISTRIBUTED mode, run locally as Step Functions runs them. aws-local-stepfunctions
// 3.0.0 runs every Map inline: it ignores ProcessorConfig, caps concurrency at 40 when
// MaxConcurrency is 0, fails the Map with the first child's own error and ignores the tolerated
// failure thresholds. So step-functions.ts swaps each distributed Map for a Task state of the
// same name (keeping InputPath, ResultSelector, ResultPath, OutputPath, Retry, Catch and the
// transition), served by runDistributedMap: each item runs as a child execution of the
// ItemProcessor, at most MaxConcurrency at once (AWS: 0 means up to 10,000), each child's input
// (after ItemSelector) held to the 256 KiB state limit, and the Map Run failing with
// States.ExceedToleratedFailureThreshold once more children failed than ToleratedFailureCount or
// ToleratedFailurePercentage allow (both default 0: one failed child fails it).
//
// Not run locally: ItemReader (S3 inputs), ItemBatcher, ResultWriter, the *Path forms of the
// thresholds and MaxConcurrency, and JSONata. A definition using one is refused when loaded.

type State = Record<string, unknown>;

/** AWS runs at most this many child executions of one Map Run at once. */
export const DISTRIBUTED_MAX_CONCURRENCY = 10_000;

const UNSUPPORTED = [
  'ItemReader',
  'ItemBatcher',
  'ResultWriter',
  'MaxConcurrencyPath',
  'ToleratedFailureCountPath',
  'ToleratedFailurePercentagePath',
  'Parameters',
];

/** Kept when a distributed Map becomes a Task: what both state types mean the same by. */
const KEPT = [
  'Comment',
  'InputPath',
  'ResultSelector',
  'ResultPath',
  'OutputPath',
  'Retry',
  'Catch',
  'Next',
  'End',
];

export function isDistributedMap(state: State): boolean {
  const processor = state.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined;
  return state.Type === 'Map' && processor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
}

/**
 * The definition with each distributed Map (at any depth outside another one's ItemProcessor)
 * replaced by a Task state whose Resource is `resource`, and those Maps by state name.
 */
export function splitDistributedMaps(
  definition: State,
  resource: string,
): { definition: State; maps: Map<string, State> } {
  const maps = new Map<string, State>();
  const walk = (machine: State): State => {
    const states = (machine.States ?? {}) as Record<string, State>;
    const out: Record<string, State> = {};
    for (const [name, state] of Object.entries(states)) {
      if (isDistributedMap(state)) {
        const refused = UNSUPPORTED.filter((field) => field in state);
        if (refused.length > 0)
          throw new Error(
            `state ${name}: the local Distributed Map does not run ${refused.join(', ')}`,
          );
        maps.set(name, state);
        out[name] = {
          Type: 'Task',
          Resource: resource,
          ...Object.fromEntries(KEPT.filter((k) => k in state).map((k) => [k, state[k]])),
        };
        continue;
      }
      const inner: State = { ...state };
      if (state.ItemProcessor) inner.ItemProcessor = walk(state.ItemProcessor as State);
      if (state.Iterator) inner.Iterator = walk(state.Iterator as State);
      if (Array.isArray(state.Branches)) inner.Branches = (state.Branches as State[]).map(walk);
      out[name] = inner;
    }
    return { ...machine, States: out };
  };
  return { definition: walk(definition), maps };
}

const SELECTOR_STATE = 'Local.ItemSelector';

/**
 * The child's definition: the ItemProcessor, with a first Pass state applying ItemSelector when
 * there is one (`$` the Map's input, `$$.Map.Item` the item, as in AWS), so the interpreter's own
 * template evaluation and the state output limit apply to the child's input.
 */
export function childDefinition(map: State): State {
  const { ProcessorConfig: _, ...processor } = map.ItemProcessor as State;
  if (map.ItemSelector === undefined) return processor;
  return {
    ...processor,
    StartAt: SELECTOR_STATE,
    States: {
      [SELECTOR_STATE]: { Type: 'Pass', Parameters: map.ItemSelector, Next: processor.StartAt },
      ...(processor.States as Record<string, State>),
    },
  };
}

/** `$` or a plain `$.a.b` path (all ItemsPath forms this project uses). */
function itemsAt(input: unknown, path: string): unknown {
  if (path === '$') return input;
  if (!/^\$(\.[A-Za-z_][\w-]*)+$/.test(path))
    throw new Error(`ItemsPath ${path}: only $ or $.a.b paths run locally`);
  return path
    .slice(2)
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | null)?.[key], input);
}

export class StatesError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export interface ChildRun {
  readonly result: Promise<unknown>;
  abort(): void;
}

export interface MapRunFigures {
  readonly items: number;
  readonly succeeded: number;
  readonly failed: number;
  /** The most child executions that ran at once. */
  readonly peakConcurrency: number;
}

/**
 * One Map Run: every item through `startChild` (the Map's input and the item's index and value:
 * what ItemSelector sees), bounded and thresholded as described above. Resolves with the
 * children's outputs in item order.
 */
export async function runDistributedMap(
  map: State,
  input: unknown,
  startChild: (input: unknown, item: { Index: number; Value: unknown }) => ChildRun,
  onDone?: (figures: MapRunFigures) => void,
): Promise<unknown[]> {
  const items = itemsAt(input, (map.ItemsPath as string | undefined) ?? '$');
  if (!Array.isArray(items))
    throw new StatesError('States.Runtime', 'the Map state input at ItemsPath is not an array');
  const limit = Math.min(
    Number(map.MaxConcurrency ?? 0) || DISTRIBUTED_MAX_CONCURRENCY,
    DISTRIBUTED_MAX_CONCURRENCY,
  );
  // Either threshold, when set, is exceeded on its own; with neither, one failed child is too many.
  const toleratedCount = map.ToleratedFailureCount as number | undefined;
  const toleratedPercentage = map.ToleratedFailurePercentage as number | undefined;
  const results: unknown[] = new Array(items.length);
  const running = new Set<ChildRun>();
  let next = 0;
  let failed = 0;
  let succeeded = 0;
  let peak = 0;
  let stopped: Error | undefined;
  const exceeded = () =>
    (toleratedCount === undefined && toleratedPercentage === undefined && failed > 0) ||
    (toleratedCount !== undefined && failed > toleratedCount) ||
    (toleratedPercentage !== undefined && (failed / items.length) * 100 > toleratedPercentage);

  await new Promise<void>((resolve) => {
    const settleIfDone = () => {
      if (running.size === 0 && (stopped !== undefined || next >= items.length)) resolve();
    };
    const startMore = () => {
      while (stopped === undefined && running.size < limit && next < items.length) {
        const index = next++;
        const child = startChild(input, { Index: index, Value: items[index] });
        running.add(child);
        peak = Math.max(peak, running.size);
        child.result.then(
          (output) => {
            results[index] = output;
            succeeded++;
          },
          (error: unknown) => {
            failed++;
            const e = error as { name?: string; message?: string; cause?: Error };
            results[index] = {
              Error: e.cause?.name ?? e.name ?? 'Error',
              Cause: e.cause?.message ?? e.message ?? String(error),
            };
            if (stopped === undefined && exceeded()) {
              stopped = new StatesError(
                'States.ExceedToleratedFailureThreshold',
                `The specified tolerated failure threshold was exceeded: ${failed} of ${items.length} child executions failed`,
              );
              for (const other of running) if (other !== child) other.abort();
            }
          },
        );
        void child.result
          .catch(() => {})
          .finally(() => {
            running.delete(child);
            startMore();
            settleIfDone();
          });
      }
      settleIfDone();
    };
    startMore();
  });
  onDone?.({ items: items.length, succeeded, failed, peakConcurrency: peak });
  if (stopped) throw stopped;
  return results;
}
