/**
 * Every package in package.json earns its place: a dependency is imported by the product's code (not
 * only by tests: that would be a devDependency), a devDependency by some code, test or script — or it is
 * a tool or a packaging choice, listed below with its reason and a check that the reason still holds.
 * A package nothing uses (issue 13: `@aws-sdk/client-sfn`) fails here.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

/** The product's code: what ships (Lambda bundles, the image, the CLI) and the simulator it runs against. */
const PRODUCT = ['bin', 'cli', 'embedded', 'functions', 'lib', 'sim'];
/** Everything else that imports packages. */
const DEVELOPMENT = ['test', 'bench', 'scripts', 'deploy'];

function sources(dir: string): string[] {
  const entries = readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs|cjs)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

const texts = (dirs: readonly string[]) => dirs.flatMap(sources).map((file) => readFileSync(file, 'utf8'));
const productTexts = texts(PRODUCT);
const developmentTexts = texts(DEVELOPMENT);

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** `from 'pkg'`, `from 'pkg/sub'`, `import('pkg…')`, import(`pkg/${x}`), `require('pkg…')`. */
function importsOf(name: string): RegExp {
  return new RegExp(`(?:from\\s+|import\\(\\s*|require\\(\\s*)['"\`]${escaped(name)}(?:/[^'"\`]*)?['"\`]`);
}

function importedBy(name: string, files: readonly string[]): boolean {
  // A types package counts where its package is imported (`@types/aws-lambda` ← `from 'aws-lambda'`).
  const imported = name.startsWith('@types/') ? name.slice('@types/'.length) : name;
  const pattern = importsOf(imported);
  return files.some((text) => pattern.test(text));
}

/** Packages nobody imports, each with why it is needed and a check that the reason is still true. */
const USED_WITHOUT_IMPORT: Readonly<Record<string, { why: string; holds: () => boolean }>> = {
  'node-fetch': {
    why: "@kubernetes/client-node's HTTP client; serverless.yml packages it as node_modules (esbuild `external`), so the Lambda zip needs it as a dependency",
    holds: () => /external:\s*\[[^\]]*node-fetch/.test(read('serverless.yml')),
  },
  node: {
    why: 'Node 24 (the Lambda runtime’s major) for every npm script, whatever Node runs npm',
    holds: () =>
      (JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> }).allowScripts.node === true,
  },
  '@types/node': {
    why: 'the types of Node’s built-ins (tsconfig `types`)',
    holds: () => /"types":\s*\[[^\]]*"node"/.test(read('tsconfig.json')),
  },
  typescript: { why: 'the type check (`tsc`)', holds: () => /\btsc\b/.test(manifest.scripts.typecheck ?? '') },
  'dependency-cruiser': {
    why: 'the layering check (`depcruise`)',
    holds: () => /\bdepcruise\b/.test(manifest.scripts['check:layers'] ?? ''),
  },
  '@swc/core': {
    why: 'dependency-cruiser parses TypeScript with swc (.dependency-cruiser.cjs)',
    holds: () => /parser:\s*'swc'/.test(read('.dependency-cruiser.cjs')),
  },
  osls: {
    why: 'the `serverless` command (the open-source Serverless Framework) that packages and invokes',
    holds: () => /\bserverless\b/.test(manifest.scripts.package ?? ''),
  },
  'serverless-esbuild': {
    why: 'a plugin in serverless.yml',
    holds: () => /plugins:[\s\S]*- serverless-esbuild/.test(read('serverless.yml')),
  },
  'serverless-step-functions': {
    why: 'a plugin in serverless.yml',
    holds: () => /plugins:[\s\S]*- serverless-step-functions/.test(read('serverless.yml')),
  },
};

describe('package.json: every dependency is used', () => {
  it('each dependency is imported by the product (or listed with its reason)', () => {
    const unused = Object.keys(manifest.dependencies).filter(
      (name) => !importedBy(name, productTexts) && !USED_WITHOUT_IMPORT[name],
    );
    assert.deepEqual(unused, [], 'dependencies the product does not import (a test-only one is a devDependency)');
  });

  it('each devDependency is imported by some code, test or script (or listed with its reason)', () => {
    const unused = Object.keys(manifest.devDependencies).filter(
      (name) => !importedBy(name, [...productTexts, ...developmentTexts]) && !USED_WITHOUT_IMPORT[name],
    );
    assert.deepEqual(unused, [], 'devDependencies nothing imports');
  });

  it('each reason still holds, and names a package that is in package.json', () => {
    const all = { ...manifest.dependencies, ...manifest.devDependencies };
    for (const [name, reason] of Object.entries(USED_WITHOUT_IMPORT)) {
      assert.ok(all[name], `${name} is listed with a reason but is not in package.json`);
      assert.ok(reason.holds(), `${name}: the reason no longer holds (${reason.why})`);
    }
  });

  it('the check finds an import when there is one, and only then', () => {
    assert.ok(importedBy('zod', ["import { z } from 'zod';"]));
    assert.ok(importedBy('kubernetes-models', ['await import(`kubernetes-models/${apiVersion}`)']));
    assert.ok(importedBy('@types/aws-lambda', ["import type { Context } from 'aws-lambda';"]));
    assert.ok(!importedBy('@aws-sdk/client-sfn', ["import { X } from '@aws-sdk/client-sfn-extra';"]));
    assert.ok(!importedBy('yaml', ['// the yaml parser']));
  });
});
