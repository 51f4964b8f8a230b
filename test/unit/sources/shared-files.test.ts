/**
 * docs/development.md ("Add a cloud") names the shared files a new cloud touches. Checked against the
 * fourth provider as it stands: the code files outside Alibaba's own folder and new files that name it
 * are exactly the files that table lists (docs and generated files aside).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('../../../', import.meta.url).pathname;
/** Where drainbridge's code lives (tests, docs and generated schemas aside). */
const CODE = ['lib', 'cli', 'functions', 'embedded', 'sim', 'state-machines', 'deploy', 'scripts'];
/** Alibaba's own: its folder and the new files beside it (the fake metadata service). */
const OWN = [/^lib\/sources\/clouds\/alibaba\//, /^sim\/metadata\/alibaba\.ts$/];

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return /\.(ts|ya?ml|json)$/.test(entry.name) ? [path] : [];
  });
}

function sharedFilesInDoc(): string[] {
  const text = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
  const table = text.slice(text.indexOf('plus these three **shared files**'));
  const rows = table.slice(0, table.indexOf('\n\n', table.indexOf('| file')));
  return [...rows.matchAll(/^\| `([^`]+)` +\|/gm)].map((m) => m[1] ?? '');
}

describe("a cloud's shared files (docs/development.md, Add a cloud)", () => {
  it('the code naming Alibaba Cloud outside its own files is the three files the doc lists', () => {
    const naming = CODE.flatMap(files)
      .map((path) => relative(ROOT, join(ROOT, path)))
      .filter((path) => !OWN.some((own) => own.test(path)))
      .filter((path) => /alibaba/i.test(readFileSync(join(ROOT, path), 'utf8')));
    const listed = sharedFilesInDoc();
    assert.equal(listed.length, 3, 'the doc lists three');
    assert.deepEqual(naming.sort(), listed.sort());
  });
});
