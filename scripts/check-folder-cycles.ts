/**
 * The part of the layering check dependency-cruiser cannot express: a folder under lib/ and one of its own
 * subfolders must not import each other (a parent↔child cycle, e.g. lib/branches/registry.ts importing
 * pods/definition.ts while pods/definition.ts imports lib/branches/branch.ts). dependency-cruiser counts a
 * folder together with everything below it, so such a pair never shows up as a folder cycle there.
 * Either the parent's own files use the child (a registry, an index re-exporting it) or the child uses
 * its parent's own files (a contract, a kit the children share) — never both. Part of `npm run check:layers`.
 *
 *   node scripts/check-folder-cycles.ts [folder…]      (default: lib)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One relative import: the importing file and the file it names, both relative to the same root. */
export type Import = readonly [from: string, to: string];

export interface FolderCycle {
  readonly parent: string;
  readonly child: string;
  /** One import each way, to show where the cycle is. */
  readonly down: Import;
  readonly up: Import;
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.\.?\/[^'"]+)['"]/g;

/** The relative specifiers a module's text names (imports, re-exports, dynamic imports). */
export function relativeSpecifiers(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((match) => match[1] ?? '');
}

/** The child of `parent` that `folder` lies in (`folder` itself when it is one), or undefined. */
function childOf(parent: string, folder: string): string | undefined {
  if (!folder.startsWith(`${parent}/`)) return undefined;
  const first = folder.slice(parent.length + 1).split('/')[0];
  return `${parent}/${first}`;
}

/** Every parent↔child folder pair whose files import each other, in name order. */
export function parentChildCycles(imports: Iterable<Import>): FolderCycle[] {
  const down = new Map<string, Import>();
  const up = new Map<string, Import>();
  for (const edge of imports) {
    const [fromDir, toDir] = [dirname(edge[0]), dirname(edge[1])];
    const downChild = childOf(fromDir, toDir);
    if (downChild && !down.has(`${fromDir} ${downChild}`)) down.set(`${fromDir} ${downChild}`, edge);
    const upChild = childOf(toDir, fromDir);
    if (upChild && !up.has(`${toDir} ${upChild}`)) up.set(`${toDir} ${upChild}`, edge);
  }
  const cycles: FolderCycle[] = [];
  for (const [pair, downEdge] of down) {
    const upEdge = up.get(pair);
    const [parent = '', child = ''] = pair.split(' ');
    if (upEdge) cycles.push({ parent, child, down: downEdge, up: upEdge });
  }
  return cycles.sort((a, b) => a.child.localeCompare(b.child));
}

function sourceFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, path);
    return /\.(ts|mts)$/.test(entry.name) ? [path] : [];
  });
}

/** The relative imports of every module under `folders` (paths relative to `root`). */
export function importsUnder(root: string, folders: readonly string[]): Import[] {
  return folders.flatMap((folder) =>
    sourceFiles(root, folder).flatMap((file) =>
      relativeSpecifiers(readFileSync(join(root, file), 'utf8')).map(
        (specifier): Import => [file, normalize(join(dirname(file), specifier))],
      ),
    ),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.cwd();
  const folders = process.argv.length > 2 ? process.argv.slice(2) : ['lib'];
  const cycles = parentChildCycles(
    importsUnder(
      root,
      folders.map((folder) => relative(root, folder)),
    ),
  );
  for (const cycle of cycles) {
    console.error(
      `  error no-parent-child-cycles: ${cycle.parent} ⇄ ${cycle.child}\n` +
        `    ${cycle.down[0]} → ${cycle.down[1]}\n    ${cycle.up[0]} → ${cycle.up[1]}\n` +
        '    A folder and its subfolder must not import each other: the parent uses the child, or the child its parent.',
    );
  }
  if (cycles.length > 0) process.exit(1);
  console.log(`✔ no parent↔child folder cycles under ${folders.join(', ')}`);
}
