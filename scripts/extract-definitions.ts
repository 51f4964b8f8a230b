/**
 * state-machines/definitions.json from the template `serverless package` wrote (.serverless/). The embedded
 * executor runs that file, so it must be exactly what deploys: `--check` fails when it is stale
 * (CI runs `serverless package` and then this with --check).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { extractDefinitions } from '../embedded/extract.ts';

const templatePath = new URL('../.serverless/cloudformation-template-update-stack.json', import.meta.url);
const outputPath = new URL('../state-machines/definitions.json', import.meta.url);
const text = `${JSON.stringify(extractDefinitions(JSON.parse(readFileSync(templatePath, 'utf8'))), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(outputPath, 'utf8');
  } catch {
    // missing: stale by definition
  }
  if (current !== text) {
    console.error(
      'state-machines/definitions.json does not match the packaged template: run `npm run definitions` and commit it',
    );
    process.exit(1);
  }
  console.log('state-machines/definitions.json matches the packaged template');
} else {
  writeFileSync(outputPath, text);
  console.log('wrote state-machines/definitions.json');
}
