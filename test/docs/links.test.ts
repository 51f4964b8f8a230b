/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an anchor into a
 * markdown page names one of its headings (GitHub's slugs).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { pages } from './run-block.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const headings = markdown.split('\n').filter((line) => /^#{1,6} /.test(line));
  return new Set(headings.map((line) => slug(line.replace(/^#+ /, ''))));
}

/** The relative links of a page (outside code), as [target, anchor]. */
function linksOf(markdown: string): [string, string][] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const links: [string, string][] = [];
  for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z]+:/.test(target)) continue;
    const [path = '', anchor = ''] = target.split('#');
    links.push([path, anchor]);
  }
  return links;
}

describe('the links of README.md and docs/', () => {
  it('a heading slug is GitHub’s', () => {
    assert.equal(slug('8. Which alarm'), '8-which-alarm');
    assert.equal(slug('`drainbridge run`: one process, no AWS'), 'drainbridge-run-one-process-no-aws');
  });

  for (const { file, text } of pages()) {
    it(`${file}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const [path, anchor] of linksOf(text)) {
        const target = path === '' ? file : normalize(join(dirname(file), path));
        const absolute = join(ROOT, target);
        if (!existsSync(absolute)) {
          broken.push(`${path}: no such file`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(absolute, 'utf8')).has(anchor)) {
          broken.push(`${path}#${anchor}: no such heading in ${target}`);
        }
      }
      assert.deepEqual(broken, []);
    });
  }
});
