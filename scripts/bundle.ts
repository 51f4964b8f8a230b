/**
 * Builds dist/: the `drainbridge` command the container image runs (forwarder, run, evacuate, …) as ES
 * modules for Node 24, dependencies included — what the Dockerfile copies into the image and what CI runs
 * as the container would (`node dist/drainbridge.mjs …`). The entry (cli/bundle-entry.ts) runs the catalog's
 * commands the image ships (cli/commands/catalog.ts, `inImage`); the others' modules are left out of the
 * bundle (NOT_SHIPPED). It loads each command when it runs; esbuild splits there, so each command's process
 * reads only its own chunks
 * (dist/chunks/): the forwarder's stays small; node-fetch and its dependencies are beside it in
 * dist/node_modules (SHIPPED_AS_MODULES). Minified (names kept, so stack traces still name
 * functions): the source text of the loaded chunks lives in the process's heap. No source maps in the
 * image; a metafile (dist/meta.json) for what went where (test/deploy/image.test.ts reads it).
 */
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { COMMAND_CATALOG } from '../cli/commands/catalog.ts';

/**
 * Packages left out of the bundle and shipped as node_modules beside it (dist/node_modules), as the Lambda
 * bundles do (serverless.yml `external`): @kubernetes/client-node's HTTP client, node-fetch 2, reaches
 * the deprecated built-in `punycode` (through whatwg-url and tr46). Node warns of that only when the
 * caller is the application's own code — which a bundle makes it look like — so bundled, every command
 * that talks to a cluster printed a DeprecationWarning (DEP0040); from node_modules it is the
 * dependency's, and nothing is printed.
 */
const SHIPPED_AS_MODULES = ['node-fetch'];

/**
 * Leaves out of the bundle what the catalog loads for the commands the image does not ship (their modules,
 * and what their loaders import beside them, e.g. the simulator's scenarios): from cli/commands/catalog.ts,
 * only the module of a shipped command (cli/commands/NAME.ts) is followed. The image's entry never calls
 * the loaders of the others, so the import left in their place never runs.
 */
const NOT_SHIPPED: Plugin = {
  name: 'not-shipped',
  setup(build) {
    const shipped = new Set(COMMAND_CATALOG.filter((entry) => entry.inImage).map((entry) => `./${entry.name}.ts`));
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import' || !args.importer.endsWith(join('cli', 'commands', 'catalog.ts'))) return;
      return shipped.has(args.path) ? undefined : { path: args.path, external: true };
    });
  },
};

/** Copies `name` and the packages it depends on (hoisted node_modules) into `into`/node_modules. */
function copyWithDependencies(name: string, into: string, copied = new Set<string>()): void {
  if (copied.has(name)) return;
  copied.add(name);
  const from = join('node_modules', name);
  cpSync(from, join(into, 'node_modules', name), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  for (const dependency of Object.keys(manifest.dependencies ?? {})) copyWithDependencies(dependency, into, copied);
}

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
    external: SHIPPED_AS_MODULES,
    plugins: [NOT_SHIPPED],
    // Some CommonJS dependencies call require(); give every ES module chunk one.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  });
  writeFileSync(`${outdir}/meta.json`, JSON.stringify(result.metafile));
  for (const name of SHIPPED_AS_MODULES) copyWithDependencies(name, outdir);
  return result.metafile;
}

if (import.meta.main) {
  const metafile = await bundle();
  const outputs = Object.keys(metafile.outputs).filter((file) => file.endsWith('.mjs'));
  const total = outputs.reduce((sum, file) => sum + statSync(file).size, 0);
  console.log(`dist/drainbridge.mjs + ${outputs.length - 1} chunks: ${(total / 1024 / 1024).toFixed(1)} MiB`);
}
