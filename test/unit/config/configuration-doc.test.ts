/**
 * docs/configuration.md is what scripts/gen-config-doc.ts writes from the settings' declarations (ENV_VARS
 * and the forwarder's, the node agent's and the bus endpoint's registries): a setting added, removed or
 * reworded without `npm run docs:config` fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ENV_VARS } from '../../../lib/config/schema.ts';
import { CONFIGURATION_DOC, configurationDoc, normalized } from '../../../scripts/gen-config-doc.ts';

const page = readFileSync(CONFIGURATION_DOC, 'utf8');

describe('docs/configuration.md', () => {
  it('is what npm run docs:config writes (tables compared without their alignment)', () => {
    assert.equal(
      normalized(page),
      normalized(configurationDoc()),
      'docs/configuration.md is stale: npm run docs:config',
    );
  });

  it('lists every variable of ENV_VARS with its default', () => {
    for (const [name, spec] of Object.entries(ENV_VARS)) {
      const row = page.split('\n').find((line) => line.startsWith(`| \`${name}\` `));
      assert.ok(row, `${name} has a row`);
      if (spec.default) assert.ok(row.includes(`\`${spec.default}\``), `${name}: default ${spec.default}`);
    }
  });

  it('the comparison sees a changed meaning, and not the formatter alignment', () => {
    const reworded = page.replace('| `DRAINBRIDGE_MAX_HELD_NODES`', '| `DRAINBRIDGE_MAX_HELD_NODE`');
    assert.notEqual(normalized(reworded), normalized(configurationDoc()));
    const realigned = page.replaceAll(/ {2,}\|/g, ' |');
    assert.equal(normalized(realigned), normalized(page));
  });
});
