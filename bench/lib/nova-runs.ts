/**
 * The two measured Nova evacuations: drainbridge's Nova branch (NovaEvacuationPass driven as the
 * Evacuate machine drives it) and `nova host-evacuate-live`, which only requests the migrations, so
 * its run lasts until Nova reports every server ACTIVE on another host.
 */
import { execFile } from 'node:child_process';
import { NovaEvacuationPass } from '../../lib/branches/nova/evacuate.ts';
import { NOVA_PASS_WAIT } from '../../lib/branches/nova/index.ts';
import { restoreNovaHost } from '../../lib/branches/nova/restore.ts';
import { KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../../lib/model/request.ts';
import { MemoryProgressStore } from '../../lib/progress/memory-store.ts';
import { waitUntil } from '../../test/support/wait.ts';
import { allMovedOff, type NovaLab } from './nova-lab.ts';
import { driveLikeStepFunctions, notYetDoneRetry } from './sfn-retry.ts';

/** One measured evacuation of a host. */
export interface NovaRun {
  readonly tool: 'drainbridge' | 'nova host-evacuate-live' | 'reference';
  readonly repetition: number;
  readonly servers: number;
  readonly ok: boolean;
  /** From the first request to every server ACTIVE and idle on another host. */
  readonly wallMs: number;
  /** drainbridge: pass invocations; nova: seconds the command itself ran; reference: the serial floor. */
  readonly detail: Record<string, number | string>;
  /** reference only: each migration's time from request to the server ACTIVE elsewhere, in ms. */
  readonly migrationsMs?: readonly number[];
  readonly failure: string;
}

/** Evacuates `host` with drainbridge's Nova pass, then restores the service (drainbridge's Restore). */
export async function runDrainbridgeNova(
  lab: NovaLab,
  ids: readonly string[],
  settings: { host: string; repetition: number; maxConcurrent: number; timeoutMs: number },
): Promise<NovaRun> {
  const store = new MemoryProgressStore();
  const requestId = `bench-nova-${Date.now()}`;
  const request: ResolvedRequest = {
    requestId,
    requester: 'bench',
    origin: 'manual',
    target: { nodeName: settings.host },
    nodeName: settings.host,
    reason: 'benchmark',
    drain: KUBECTL_DRAIN_DEFAULTS,
  };
  // As the workflow wires it (lib/workflow/nova-wiring.ts): each pass follows its migrations for a while.
  const pass = new NovaEvacuationPass({
    nova: lab.nova,
    store,
    options: { maxConcurrentMigrations: settings.maxConcurrent },
    wait: NOVA_PASS_WAIT,
  });
  const base = { tool: 'drainbridge' as const, repetition: settings.repetition, servers: ids.length };
  const started = performance.now();
  try {
    const rule = notYetDoneRetry('NovaPass');
    const drive = await driveLikeStepFunctions(pass, request, { rule, deadline: Date.now() + settings.timeoutMs });
    const wallMs = performance.now() - started;
    const moved = await allMovedOff(lab, ids, settings.host);
    const detail = {
      passes: drive.passes,
      notYetDone: drive.notYetDone,
      maxConcurrentMigrations: settings.maxConcurrent,
    };
    return {
      ...base,
      ok: moved,
      wallMs,
      detail,
      failure: moved ? '' : 'done, but not every server is ACTIVE elsewhere',
    };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    return { ...base, ok: false, wallMs: performance.now() - started, detail: {}, failure };
  } finally {
    await restoreNovaHost({ nova: lab.nova, store }, [requestId]).catch(() => undefined);
  }
}

function runNovaCommand(
  lab: NovaLab,
  host: string,
  timeoutMs: number,
): Promise<{ code: number | string; stderr: string }> {
  const args = ['--os-compute-api-version', '2.88', 'host-evacuate-live', host];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...lab.osEnv };
  return new Promise((resolve) => {
    execFile('nova', args, { env, timeout: timeoutMs }, (error, _stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : (error.signal ?? 'error')) : 0;
      resolve({ code, stderr: stderr.trim().split('\n').slice(-3).join('\n') });
    });
  });
}

/** `nova host-evacuate-live HOST`, then polls Nova (every 250 ms) until every server is ACTIVE elsewhere. */
export async function runNovaHostEvacuateLive(
  lab: NovaLab,
  ids: readonly string[],
  settings: { host: string; repetition: number; timeoutMs: number },
): Promise<NovaRun> {
  const base = { tool: 'nova host-evacuate-live' as const, repetition: settings.repetition, servers: ids.length };
  const started = performance.now();
  try {
    const command = await runNovaCommand(lab, settings.host, settings.timeoutMs);
    const commandSeconds = (performance.now() - started) / 1000;
    if (command.code !== 0) throw new Error(`nova host-evacuate-live exited ${command.code}: ${command.stderr}`);
    await waitUntil(
      `every server off ${settings.host}`,
      async () => ((await allMovedOff(lab, ids, settings.host)) ? true : undefined),
      settings.timeoutMs,
      { everyMs: 250 },
    );
    const wallMs = performance.now() - started;
    return { ...base, ok: true, wallMs, detail: { commandSeconds: Number(commandSeconds.toFixed(2)) }, failure: '' };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    return { ...base, ok: false, wallMs: performance.now() - started, detail: {}, failure };
  }
}

/** Live-migrates `ids` one after another at most `concurrency` at a time, and polls each until it is ACTIVE elsewhere. */
async function migrateAndWait(lab: NovaLab, id: string, settings: { host: string; pollMs: number }): Promise<number> {
  const started = performance.now();
  await lab.nova.liveMigrate(id);
  await waitUntil(
    `server ${id} ACTIVE off ${settings.host}`,
    async () => {
      const server = await lab.nova.getServer(id);
      if (server?.status === 'ERROR') throw new Error(`server ${id} went to ERROR while migrating`);
      return (await allMovedOff(lab, [id], settings.host)) ? true : undefined;
    },
    300_000,
    { everyMs: settings.pollMs },
  );
  return performance.now() - started;
}

/**
 * The reference for the serial floor: the servers live-migrated `concurrency` at a time (Nova's
 * max_concurrent_live_migrations), the next started as soon as a poll every `pollMs` finds one ACTIVE on
 * another host. The floor is what the migrations themselves took, laid end to end by slot: the longest
 * slot's sum of migration times.
 */
export async function runReferencePoller(
  lab: NovaLab,
  ids: readonly string[],
  settings: { host: string; repetition: number; concurrency: number; pollMs: number },
): Promise<NovaRun> {
  const base = { tool: 'reference' as const, repetition: settings.repetition, servers: ids.length };
  const started = performance.now();
  const queue = [...ids];
  const slots: number[][] = [];
  try {
    await Promise.all(
      Array.from({ length: settings.concurrency }, async (_, slot) => {
        slots[slot] = [];
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          slots[slot]?.push(await migrateAndWait(lab, id, settings));
        }
      }),
    );
    const wallMs = performance.now() - started;
    const floorMs = Math.max(...slots.map((times) => times.reduce((sum, ms) => sum + ms, 0)));
    const migrationsMs = slots.flat();
    const detail = { floorSeconds: Number((floorMs / 1000).toFixed(1)), pollMs: settings.pollMs };
    return { ...base, ok: true, wallMs, detail, migrationsMs, failure: '' };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    return { ...base, ok: false, wallMs: performance.now() - started, detail: {}, failure };
  }
}
