/** Writes docs/schemas/*.schema.json from lib/bus/contracts (run: npm run schemas). A unit test checks they are current. */
import { writeFileSync } from 'node:fs';
import { generateJsonSchemas } from '../lib/bus/contracts/json-schema.ts';

const dir = new URL('../docs/schemas/', import.meta.url);
for (const [file, text] of generateJsonSchemas()) {
  writeFileSync(new URL(file, dir), text);
  console.log(`wrote docs/schemas/${file}`);
}
