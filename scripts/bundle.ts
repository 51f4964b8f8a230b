/**
 * Builds dist/drainbridge.mjs: the whole `drainbridge` command (forwarder, run, evacuate, …) as one ES
 * module for Node 24, dependencies included — what the Dockerfile copies into the image and what CI runs
 * as the container would (`node dist/drainbridge.mjs …`). No source maps in the image; a metafile for size.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const outfile = 'dist/drainbridge.mjs';
mkdirSync('dist', { recursive: true });
const result = await build({
  entryPoints: ['cli/bundle-entry.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minifySyntax: true,
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
  // Some CommonJS dependencies call require(); give the ES module bundle one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
writeFileSync('dist/meta.json', JSON.stringify(result.metafile));
console.log(`${outfile}: ${(statSync(outfile).size / 1024 / 1024).toFixed(1)} MiB`);
