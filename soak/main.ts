/**
 * `npm run soak`: maintenance under chaos for `--minutes` on a simulated cluster, then the invariant
 * checker over what the cluster saw. Exits 1 when an invariant broke (naming it and the seed), 2 on bad
 * arguments. See docs/safety.md, "Soak".
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_USER } from '../test/forwarder/harness.ts';
import { DRAINBRIDGE_SA } from '../test/support/request-log.ts';
import { checkInvariants } from './checker.ts';
import { stopClouds, tickNotices } from './clouds.ts';
import { NOVA_NODES, soakNodeName } from './cluster.ts';
import { epilogue } from './epilogue.ts';
import type { NovaHistory, SoakLog } from './log.ts';
import { NovaSoak } from './nova.ts';
import { observe } from './observe.ts';
import { parseSoakOptions, type SoakOptions, USAGE } from './options.ts';
import { report } from './report.ts';
import { count, runSchedule } from './schedule.ts';
import { startWorld } from './setup.ts';
import type { SoakWorld } from './world.ts';

function options(): SoakOptions {
  try {
    return parseSoakOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

/**
 * The self-test's bug: drainbridge's account, given the optional delete role (deploy/base/rbac/
 * disable-eviction.yaml), deletes a pod of the PDB at its limit outright, through the simulator's API.
 */
async function seededBug(w: SoakWorld): Promise<void> {
  w.sim.apply(readFileSync(new URL('../deploy/base/rbac/disable-eviction.yaml', import.meta.url), 'utf8'));
  const pods = w.sim.store.list({ group: '', resource: 'pods' }, { namespace: 'shop', labelSelector: 'app=ledger' });
  const pod = pods.items.find((p) => !p.metadata.deletionTimestamp);
  if (!pod) return;
  const asDrainbridge = w.kubectl.withKubeconfig(w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')));
  const result = await asDrainbridge.run(['delete', 'pod', '-n', 'shop', pod.metadata.name ?? '', '--wait=false']);
  asDrainbridge.close();
  console.log(
    `soak: seeded bug: drainbridge's account deleted pod shop/${pod.metadata.name}: kubectl exit ${result.code}`,
  );
  count(w, 'seeded bug: direct pod DELETE as drainbridge');
}

/**
 * `--nova`: the lab reached and locked and servers booted on its computes — or the soak refused at once,
 * naming how to bring the lab up (exit 2).
 */
async function openNova(opts: SoakOptions): Promise<NovaSoak | undefined> {
  if (!opts.nova) return undefined;
  let nova: NovaSoak;
  try {
    nova = await NovaSoak.open(Object.fromEntries(NOVA_NODES.map((n) => [n.host, soakNodeName(n.index)])));
  } catch (error) {
    console.error(`soak: ${(error as Error).message}`);
    process.exit(2);
  }
  console.log(`soak: Nova lab reached; booting servers on ${Object.keys(nova.nodeOf).join(', ')}…`);
  try {
    await nova.bootServers(`soak-${opts.seed}`);
  } catch (error) {
    console.error(`soak: booting servers on the Nova lab failed: ${(error as Error).message}`);
    console.error(`soak: Nova lab: ${await nova.leaveAsFound()}`);
    process.exit(2);
  }
  return nova;
}

/** The last look at Nova after the epilogue (undefined without --nova); a lab that does not answer ends the soak unjudged. */
async function novaAtEnd(nova: NovaSoak | undefined): Promise<NovaHistory | undefined> {
  try {
    return await nova?.finish();
  } catch (error) {
    console.error(`soak: Nova did not answer at the end, nothing judged: ${(error as Error).message}`);
    console.error(`soak: Nova lab: ${await nova?.leaveAsFound()}`);
    process.exit(1);
  }
}

async function runSoak(opts: SoakOptions, started: number, nova: NovaSoak | undefined): Promise<void> {
  console.log(`soak: seed ${opts.seed}, ${opts.minutes} min, ${opts.nodes} nodes; starting the cluster…`);
  const w = await startWorld(opts, nova);
  console.log(`soak: logs in ${w.dir}`);
  const observer = observe(w.sim, [RUN_USER, DRAINBRIDGE_SA], w.people);
  for (const replica of w.replicas) replica.start();
  for (const cloud of w.clouds) cloud.agent.start();
  nova?.startSampling();
  const endsAt = Date.now() + opts.minutes * 60_000;
  const bugAt = Date.now() + w.random.int(10_000, Math.max(10_000, (opts.minutes * 60_000) / 2));
  let bugDone = !opts.seededBug;
  let minute = 0;
  await runSchedule(w, endsAt, () => {
    observer.drainLog();
    for (const replica of w.replicas) replica.sampleRss();
    for (const cloud of w.clouds) cloud.agent.sampleRss();
    for (const kind of tickNotices(w.clouds)) count(w, kind);
    if (!bugDone && Date.now() >= bugAt) {
      bugDone = true;
      void seededBug(w);
    }
    const now = Math.floor((Date.now() - started) / 60_000);
    if (now > minute) {
      minute = now;
      console.log(`soak: minute ${minute}, ${[...w.counts.values()].reduce((a, b) => a + b, 0)} events so far`);
    }
  });
  console.log('soak: schedule over; healing, ending every maintenance…');
  await epilogue(w);
  for (const replica of w.replicas) replica.sampleRss();
  for (const cloud of w.clouds) cloud.agent.sampleRss();
  const seen = observer.snapshot();
  const novaSeen = await novaAtEnd(nova);
  await stopClouds(w.clouds);
  for (const replica of w.replicas) await replica.retire('SIGTERM');
  observer.stop();
  const log: SoakLog = {
    seed: opts.seed,
    maxHeldNodes: opts.maxHeld,
    deletesAllowed: false,
    requestBoundMs: opts.requestBoundMinutes * 60_000,
    endedAt: Date.now(),
    ...seen,
    budgetSamples: observer.budgetSamples(),
    budgetBreaches: observer.budgetBreaches(),
    replicas: [...w.replicas, ...w.clouds.map((c) => c.agent)].flatMap((r) => r.lives()),
    ...(novaSeen ? { nova: novaSeen } : {}),
    notices: w.notices,
  };
  // Kept beside the processes' logs: the checker can judge the same history again (a replay without the hour).
  writeFileSync(join(w.dir, 'soak-log.json'), JSON.stringify(log));
  const verdict = checkInvariants(log);
  // Judged first, from what Nova showed after the epilogue; then the lab is put back for the e2e suite.
  if (nova) console.log(`soak: Nova lab left as found: ${await nova.leaveAsFound()}`);
  console.log(report(w, log, verdict, opts.minutes));
  w.kubectl.close();
  await w.proxy.close();
  await w.busFront.close();
  await w.sim.stop();
  process.exit(verdict.violations.length > 0 ? 1 : 0);
}

async function main(): Promise<void> {
  const opts = options();
  const started = Date.now();
  const nova = await openNova(opts);
  try {
    await runSoak(opts, started, nova);
  } catch (error) {
    // A soak that broke down still leaves the lab usable: its servers deleted, every compute enabled.
    if (nova) console.error(`soak: Nova lab: ${await nova.leaveAsFound()}`);
    throw error;
  }
}

await main();
