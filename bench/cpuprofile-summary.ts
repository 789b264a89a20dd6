// Summarises a V8 .cpuprofile (node --cpu-prof): self time by module and by function.
//
//   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile>
//       [--windows <bench-windows-<pid>.json> --mode single.handler[,single.rawSteps...]]
//
// With --windows, only samples taken while the named modes' measured requests ran are counted
// (bench/publish.ts writes those windows, in process.hrtime µs, the clock of the profile, when it
// runs under --cpu-prof; without --mode the file's names are listed). Code from an esbuild bundle
// is attributed to its source modules through the `// path` comments esbuild writes before each
// module when it does not minify.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const file = process.argv[2];
if (file === undefined || file.startsWith('--')) {
  throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [--windows file --mode names]');
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

/** Sorted [start, end] µs windows to keep; everything when none were asked for. */
function selectedWindows(): Array<readonly [number, number]> {
  const windowsFile = option('--windows');
  if (windowsFile === undefined) return [[Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]];
  const all = JSON.parse(readFileSync(windowsFile, 'utf8')) as Record<string, [number, number][]>;
  const names = option('--mode')?.split(',');
  if (names === undefined) {
    console.log(`modes in ${windowsFile}: ${Object.keys(all).join(', ')}`);
    process.exit(0);
  }
  return names
    .flatMap((name) => {
      const found = all[name];
      if (found === undefined) throw new Error(`no windows for mode ${name}`);
      return found;
    })
    .sort((a, b) => a[0] - b[0]);
}
const keep = selectedWindows();
const inWindow = (t: number) => keep.some(([start, end]) => t >= start && t <= end);

/** For a bundle: the module each line belongs to (sorted start lines of `// path` comments). */
const bundles = new Map<string, { starts: number[]; modules: string[] } | null>();
function bundleModules(url: string) {
  if (bundles.has(url)) return bundles.get(url) ?? null;
  let index: { starts: number[]; modules: string[] } | null = null;
  try {
    const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
    const starts: number[] = [];
    const modules: string[] = [];
    lines.forEach((line, i) => {
      const match = /^\/\/ ((?:node_modules|functions|infra|test|bench)\/\S+|<stdin>)$/.exec(line);
      if (match?.[1]) {
        starts.push(i);
        modules.push(match[1]);
      }
    });
    if (starts.length > 0) index = { starts, modules };
  } catch {
    index = null;
  }
  bundles.set(url, index);
  return index;
}

/** Where a frame's code comes from: a package, a project folder, Node itself, or V8. */
function moduleOf(frame: CallFrame): { module: string; group: string } {
  const { url, functionName } = frame;
  if (url === '') return { module: functionName, group: functionName };
  if (url.startsWith('node:')) return { module: url, group: 'node (built-in)' };
  let path = url;
  const bundle = url.startsWith('file:') ? bundleModules(url) : null;
  if (bundle) {
    let lo = 0;
    let hi = bundle.starts.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if ((bundle.starts[mid] ?? 0) <= frame.lineNumber) lo = mid;
      else hi = mid - 1;
    }
    path = bundle.modules[lo] ?? url;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) {
    const group = pkg.startsWith('@aws-sdk/') || pkg.startsWith('@smithy/') ? 'AWS SDK v3' : pkg;
    return { module: path.slice(path.lastIndexOf('node_modules/') + 13), group };
  }
  const project = /(functions|infra|test|bench)\/.*$/.exec(path)?.[0];
  if (project) return { module: project, group: `project ${project.split('/')[0]}/` };
  return { module: path, group: 'other' };
}

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfByNode = new Map<number, number>();
// A sample stands for the time until the next one; on a loaded machine the thread is sometimes
// off CPU between two samples (descheduled), and that whole gap would be charged to the one
// function that happened to be running (a 92 ms "crc32C" sample in a 1 ms-interval profile). A
// gap longer than CAP_INTERVALS sampling intervals counts as one interval; the rest is reported.
const CAP_INTERVALS = 4;
const interval = median(profile.timeDeltas.slice(1)) || 1000;
let t = profile.startTime;
let total = 0;
let cappedUs = 0;
let capped = 0;
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i] ?? 0;
  const gap = profile.timeDeltas[i + 1] ?? 0;
  if (!inWindow(t)) return;
  const next = gap > CAP_INTERVALS * interval ? interval : gap;
  if (next !== gap) {
    capped++;
    cappedUs += gap - next;
  }
  selfByNode.set(id, (selfByNode.get(id) ?? 0) + next);
  total += next;
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 0;
}

const parentOf = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parentOf.set(child, node.id);
/** Groups that do no work of their own: their time belongs to the JavaScript that called them. */
const NOT_A_CALLER = new Set(['node (built-in)', 'other', '(program)', '(root)']);
function callerGroup(id: number, own: string): string {
  if (own === '(idle)' || own === '(garbage collector)') return own;
  let innermostNode: string | undefined;
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at)?.callFrame;
    if (!frame || frame.url === '') continue; // native frames (writev, runMicrotasks, ...)
    const { group } = moduleOf(frame);
    if (!NOT_A_CALLER.has(group)) return group;
    if (frame.url.startsWith('node:')) innermostNode ??= frame.url;
  }
  // Event-loop work no JavaScript of ours called, e.g. socket reads: named by Node's module.
  return innermostNode ? `node, from the event loop: ${innermostNode}` : `${own} (native)`;
}

const byGroup = new Map<string, number>();
const byCaller = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const [id, us] of selfByNode) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  const { module, group } = moduleOf(frame);
  byGroup.set(group, (byGroup.get(group) ?? 0) + us);
  const caller = callerGroup(id, group);
  byCaller.set(caller, (byCaller.get(caller) ?? 0) + us);
  const name = `${frame.functionName || '(anonymous)'}  ${module}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
}
const idle = byGroup.get('(idle)') ?? 0;
const busy = total - idle;
const pct = (us: number, of: number) => `${((100 * us) / of).toFixed(1).padStart(5)}%`;
const ms = (us: number) => `${(us / 1000).toFixed(1).padStart(8)} ms`;
const top = (map: Map<string, number>, n: number) =>
  [...map]
    .filter(([name]) => !name.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n);

console.log(
  `${keep.length} window(s), ${ms(total).trim()} sampled; idle ${ms(idle)} (${pct(idle, total).trim()}); on CPU ${ms(busy)} (${pct(busy, total).trim()})`,
);
if (capped > 0) {
  console.log(
    `${capped} gap(s) over ${CAP_INTERVALS} × the ${(interval / 1000).toFixed(2)} ms interval counted as one interval: ${ms(cappedUs).trim()} off CPU left out`,
  );
}
console.log('\nself time by module group (% of on-CPU time, % of window)');
for (const [group, us] of top(byGroup, 15)) {
  console.log(`${ms(us)} ${pct(us, busy)} ${pct(us, total)}  ${group}`);
}
console.log(
  '\nthe same, with Node built-ins and native code charged to the nearest JavaScript caller',
);
for (const [group, us] of top(byCaller, 15)) {
  console.log(`${ms(us)} ${pct(us, busy)} ${pct(us, total)}  ${group}`);
}
console.log('\ntop functions by self time (% of on-CPU time)');
for (const [name, us] of top(byFunction, Number(option('--top') ?? 25)))
  console.log(`${ms(us)} ${pct(us, busy)}  ${name}`);
