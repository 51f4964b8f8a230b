/**
 * The floor of one measured run from Nova's own records: how long each source host had a live migration in
 * flight. On a loaded machine the fake driver's migrations take 5–30 s, so a floor measured in another run
 * (the reference's) is not a floor for this one; the migration records of the run itself are.
 */
import { compute, type NovaLab } from './nova-lab.ts';

interface MigrationRecord {
  readonly source_compute: string | null;
  readonly status: string;
  readonly created_at: string;
  readonly updated_at: string | null;
}

/** Nova writes its timestamps in UTC without a zone (`2026-11-28T15:54:16.000000`). */
function utcMs(stamp: string): number {
  return Date.parse(stamp.endsWith('Z') ? stamp : `${stamp}Z`);
}

/** Each server's completed live migration off `host`: [accepted, completed] in ms. */
async function migrationIntervals(lab: NovaLab, ids: readonly string[], host: string): Promise<[number, number][]> {
  const intervals: [number, number][] = [];
  for (const id of ids) {
    const path = `/os-migrations?instance_uuid=${id}&migration_type=live-migration`;
    const { migrations } = await compute<{ migrations: MigrationRecord[] }>(lab, 'GET', path);
    const done = migrations.filter((m) => m.status === 'completed' && m.source_compute === host && m.updated_at);
    for (const m of done) intervals.push([utcMs(m.created_at), utcMs(m.updated_at as string)]);
  }
  return intervals;
}

/** The length of the union of `intervals`: the time at least one of them was open. */
export function unionMs(intervals: readonly [number, number][]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let open: [number, number] | undefined;
  for (const [start, end] of sorted) {
    if (open && start <= open[1]) open[1] = Math.max(open[1], end);
    else {
      if (open) total += open[1] - open[0];
      open = [start, end];
    }
  }
  return open ? total + open[1] - open[0] : total;
}

/**
 * Seconds the busiest source had a migration in flight (accepted to completed, Nova's records, whole
 * seconds): with max_concurrent_live_migrations 1, that source's migrations laid end to end, queueing in
 * Nova included and the gaps between a completion and the next request excluded.
 */
export async function busySeconds(lab: NovaLab, byHost: ReadonlyMap<string, readonly string[]>): Promise<number> {
  const perHost = await Promise.all(
    [...byHost].map(async ([host, ids]) => unionMs(await migrationIntervals(lab, ids, host))),
  );
  return Number((Math.max(0, ...perHost) / 1000).toFixed(1));
}
