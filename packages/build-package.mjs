// Builds the package in the current directory (npm runs `prepack` there): one ESM bundle of its
// own modules (esbuild; every bare import — the AWS SDK, middy — stays an import of the user's
// copy) and its type declarations (tsc, with the package's tsconfig.build.json).
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const here = process.cwd();
rmSync(join(here, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: [join(here, 'src/index.ts')],
  outfile: join(here, 'dist/index.js'),
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
});
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(here, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
// A package built from the functions' own source keeps the repository's layout in its
// declarations (dist/types/…): one entry points at its index.
if (!existsSync(join(here, 'dist/index.d.ts'))) {
  const index = join(here, 'dist/types', relative(root, here), 'src/index.js');
  writeFileSync(
    join(here, 'dist/index.d.ts'),
    `export * from './${relative(join(here, 'dist'), index)}';\n`,
  );
}
