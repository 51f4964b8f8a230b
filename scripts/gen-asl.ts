/**
 * Writes the Evacuate machine's branch states (state-machines/evacuate.asl.yml) from the branch registry;
 * `--check` fails when the file is stale (CI runs it; `npm run definitions` runs it first).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { BRANCH_REGISTRY } from '../lib/branches/registry.ts';
import { generateEvacuateAsl } from './asl-branches.ts';

const aslPath = new URL('../state-machines/evacuate.asl.yml', import.meta.url);
const current = readFileSync(aslPath, 'utf8');
const generated = generateEvacuateAsl(current, BRANCH_REGISTRY);

if (process.argv.includes('--check')) {
  if (generated !== current) {
    console.error(
      'state-machines/evacuate.asl.yml does not match the branch registry: run `npm run definitions` and commit both files',
    );
    process.exit(1);
  }
  console.log('state-machines/evacuate.asl.yml matches the branch registry');
} else if (generated === current) {
  console.log('state-machines/evacuate.asl.yml is up to date');
} else {
  writeFileSync(aslPath, generated);
  console.log('wrote the branch states of state-machines/evacuate.asl.yml');
}
