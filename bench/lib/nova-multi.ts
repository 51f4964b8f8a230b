/**
 * Several Nova hosts at once (issue 23 point 4): `servers` servers on each of `hosts`, evacuated together.
 * Three ways, on fresh servers each:
 *   - reference: every source's nova-compute disabled, then per source its servers live-migrated
 *     `maxConcurrent` at a time, polled; its floor is the slowest source's migration times laid end to end
 *     by slot (Nova's max_concurrent_live_migrations is enforced per source nova-compute).
 *   - `nova host-evacuate-live`: every source disabled first (as an operator does before evacuating several
 *     hosts, or the servers of one land on the next), then one command per host in parallel.
 *   - drainbridge: one Nova branch per host as three admitted requests run it: each prepare (its
 *     nova-compute disabled with drainbridge's reason), then the passes together, each driven by the
 *     Evacuate machine's own NotYetDone Retry, each host restored after.
 */
import { NovaEvacuationPass } from '../../lib/branches/nova/evacuate.ts';
import { NOVA_PASS_WAIT } from '../../lib/branches/nova/index.ts';
import { restoreNovaHost } from '../../lib/branches/nova/restore.ts';
import { KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../../lib/model/request.ts';
import { MemoryProgressStore } from '../../lib/progress/memory-store.ts';
import { allMovedOff, type NovaLab } from './nova-lab.ts';
import { type NovaRun, runNovaHostEvacuateLive, runReferencePoller } from './nova-runs.ts';
import { driveLikeStepFunctions, notYetDoneRetry } from './sfn-retry.ts';

/** The servers booted on each source host, by host. */
export type ServersByHost = ReadonlyMap<string, readonly string[]>;

export interface MultiSettings {
  readonly repetition: number;
  readonly maxConcurrent: number;
  readonly pollMs: number;
  readonly timeoutMs: number;
}

const BENCH_DISABLE_REASON = 'drainbridge bench: several hosts evacuated together';

/** Disables every source's nova-compute (the operator's step before evacuating several hosts); returns an undo. */
async function disableSources(lab: NovaLab, hosts: readonly string[]): Promise<() => Promise<void>> {
  const services = (await lab.nova.listComputeServices()).filter((s) => hosts.includes(s.host));
  for (const service of services) await lab.nova.disableService(service.id, BENCH_DISABLE_REASON);
  return async () => {
    for (const service of services) await lab.nova.enableService(service.id);
  };
}

/** One run over all hosts: the slowest host's wall time, every host's servers checked moved. */
function combine(tool: NovaRun['tool'], settings: MultiSettings, runs: readonly NovaRun[], wallMs: number): NovaRun {
  const failures = runs.filter((run) => !run.ok).map((run) => run.failure);
  const detail: Record<string, number | string> = { hosts: runs.length };
  if (tool === 'reference') {
    detail.floorSeconds = Math.max(...runs.map((run) => Number(run.detail.floorSeconds)));
  }
  if (tool === 'drainbridge') {
    detail.passes = runs.reduce((sum, run) => sum + Number(run.detail.passes ?? 0), 0);
    detail.maxConcurrentMigrations = settings.maxConcurrent;
  }
  return {
    tool,
    repetition: settings.repetition,
    servers: runs.reduce((sum, run) => sum + run.servers, 0),
    ok: failures.length === 0,
    wallMs,
    detail,
    failure: failures.join('; '),
  };
}

async function acrossHosts(
  lab: NovaLab,
  byHost: ServersByHost,
  job: { tool: NovaRun['tool']; settings: MultiSettings },
  runOne: (host: string, ids: readonly string[]) => Promise<NovaRun>,
): Promise<NovaRun> {
  const { tool, settings } = job;
  const hosts = [...byHost.keys()];
  const undo = await disableSources(lab, hosts);
  const started = performance.now();
  try {
    const runs = await Promise.all(hosts.map((host) => runOne(host, byHost.get(host) ?? [])));
    return combine(tool, settings, runs, performance.now() - started);
  } finally {
    await undo();
  }
}

/** The reference poller on every host at once; the floor is the slowest host's. */
export function runReferenceOnHosts(lab: NovaLab, byHost: ServersByHost, settings: MultiSettings): Promise<NovaRun> {
  return acrossHosts(lab, byHost, { tool: 'reference', settings }, (host, ids) =>
    runReferencePoller(lab, ids, {
      host,
      repetition: settings.repetition,
      concurrency: settings.maxConcurrent,
      pollMs: settings.pollMs,
    }),
  );
}

/** `nova host-evacuate-live` once per host, in parallel. */
export function runHostEvacuateLiveOnHosts(
  lab: NovaLab,
  byHost: ServersByHost,
  settings: MultiSettings,
): Promise<NovaRun> {
  return acrossHosts(lab, byHost, { tool: 'nova host-evacuate-live', settings }, (host, ids) =>
    runNovaHostEvacuateLive(lab, ids, { host, repetition: settings.repetition, timeoutMs: settings.timeoutMs }),
  );
}

function requestFor(host: string, index: number): ResolvedRequest {
  return {
    requestId: `bench-nova-multi-${Date.now()}-${index}`,
    requester: 'bench',
    origin: 'manual',
    target: { nodeName: host },
    nodeName: host,
    reason: 'benchmark',
    drain: KUBECTL_DRAIN_DEFAULTS,
  };
}

/** drainbridge's Nova branch on every host: all prepares, then the passes together; every host restored after. */
export async function runDrainbridgeOnHosts(
  lab: NovaLab,
  byHost: ServersByHost,
  settings: MultiSettings,
): Promise<NovaRun> {
  const store = new MemoryProgressStore();
  const options = { maxConcurrentMigrations: settings.maxConcurrent };
  const hosts = [...byHost.keys()];
  const requests = hosts.map(requestFor);
  const pass = new NovaEvacuationPass({ nova: lab.nova, store, options, wait: NOVA_PASS_WAIT });
  const rule = notYetDoneRetry('NovaPass');
  const started = performance.now();
  try {
    await Promise.all(requests.map((request) => pass.prepare(request)));
    const runs = await Promise.all(
      requests.map(async (request, index): Promise<NovaRun> => {
        const host = hosts[index] as string;
        const ids = byHost.get(host) ?? [];
        const drive = await driveLikeStepFunctions(pass, request, { rule, deadline: Date.now() + settings.timeoutMs });
        const moved = await allMovedOff(lab, ids, host);
        const failure = moved ? '' : `${host}: done, but not every server is ACTIVE elsewhere`;
        const base = { tool: 'drainbridge' as const, repetition: settings.repetition, servers: ids.length };
        return { ...base, ok: moved, wallMs: 0, detail: { passes: drive.passes }, failure };
      }),
    );
    return combine('drainbridge', settings, runs, performance.now() - started);
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    const base = { tool: 'drainbridge' as const, repetition: settings.repetition, servers: 0 };
    return { ...base, ok: false, wallMs: performance.now() - started, detail: {}, failure };
  } finally {
    for (const request of requests)
      await restoreNovaHost({ nova: lab.nova, store }, [request.requestId]).catch(() => undefined);
  }
}
