/**
 * Whether two values would be written as the same JSON, whatever the order of their keys. Records read
 * back through a schema come with their keys in the schema's order, not the writer's: comparing their
 * `JSON.stringify` text saw a change on every pass and wrote a record that had not changed.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : v,
  );
}
