/** JSON Schema documents generated from the zod contracts, for the README and for other producers. */
import { z } from 'zod';
import { CONTRACTS, type DetailType } from './contracts.ts';

export function schemaFileName(detailType: DetailType): string {
  return `${detailType.toLowerCase().replaceAll(' ', '-')}.v1.schema.json`;
}

/** One JSON Schema per detail-type, keyed by file name, with the source and detail-type recorded. */
export function generateJsonSchemas(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [detailType, contract] of Object.entries(CONTRACTS) as [DetailType, (typeof CONTRACTS)[DetailType]][]) {
    const schema = {
      ...z.toJSONSchema(contract.schema, { target: 'draft-2020-12', io: 'input' }),
      title: detailType,
      description: `detail of "${detailType}" events from source "${contract.source}" (version 1)`,
    };
    out.set(schemaFileName(detailType), `${JSON.stringify(schema, null, 2)}\n`);
  }
  return out;
}
