/**
 * Builds dist/: the `drainbridge` command the container image runs (forwarder, run, evacuate, …) as ES
 * modules for Node 24, dependencies included — what the Dockerfile copies into the image and what CI runs
 * as the container would (`node dist/drainbridge.mjs …`). The entry (cli/bundle-entry.ts) loads each
 * command when it runs; esbuild splits there, so each command's process reads only its own chunks
 * (dist/chunks/): the forwarder's stays small. Minified (names kept, so stack traces still name
 * functions): the source text of the loaded chunks lives in the process's heap. No source maps in the
 * image; a metafile (dist/meta.json) for what went where (test/deploy/image.test.ts reads it).
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { build, type Metafile } from 'esbuild';

export async function bundle(outdir = 'dist'): Promise<Metafile> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { drainbridge: 'cli/bundle-entry.ts' },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    keepNames: true,
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
    // Some CommonJS dependencies call require(); give every ES module chunk one.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  });
  writeFileSync(`${outdir}/meta.json`, JSON.stringify(result.metafile));
  return result.metafile;
}

if (import.meta.main) {
  const metafile = await bundle();
  const outputs = Object.keys(metafile.outputs).filter((file) => file.endsWith('.mjs'));
  const total = outputs.reduce((sum, file) => sum + statSync(file).size, 0);
  console.log(`dist/drainbridge.mjs + ${outputs.length - 1} chunks: ${(total / 1024 / 1024).toFixed(1)} MiB`);
}
