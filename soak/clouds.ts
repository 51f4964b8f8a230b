/**
 * Cloud maintenance notices in the soak, travelling as in production: a fake metadata server per cloud
 * (sim/metadata: EC2 IMDSv2 scheduled events, Azure Scheduled Events, GCE maintenance-event and
 * upcoming-maintenance), a real node agent process on its node (`drainbridge forwarder --node-agent`)
 * reading it, and the agent publishing to the `drainbridge run` replicas' bus endpoint over TLS with the
 * shared key, through a front that spreads connections over both replicas as a Service does.
 *
 * The schedule announces a notice on a node with none standing, moves it earlier or later, withdraws it;
 * the provider side (`tickNotices`) completes a notice once its maintenance is due — EC2 marks the event
 * completed, Azure removes the event drainbridge approved, GCE's value goes back to NONE. Each transition
 * is written to a NoticeHistory the checker judges against the Evacuation records (log.ts).
 */
import { formatEc2ImdsDate, formatRfc1123 } from '../lib/sources/clouds/dates.ts';
import { FakeAzureMetadata, FakeEc2Metadata, FakeGceMetadata } from '../sim/metadata/index.ts';
import { CLOUD_NODES, type CloudProvider, instanceIdOf } from './cluster.ts';
import type { NoticeHistory } from './log.ts';
import { Replica } from './processes.ts';
import type { Random } from './random.ts';

type Fake =
  | { readonly provider: 'aws'; readonly fake: FakeEc2Metadata }
  | { readonly provider: 'azure'; readonly fake: FakeAzureMetadata }
  | { readonly provider: 'gcp'; readonly fake: FakeGceMetadata };

/** What kind of notice stands: scheduled (a start time that can move) or at once (GCE maintenance-event). */
interface Standing {
  readonly history: MutableNotice;
  readonly eventId: string;
  readonly scheduled: boolean;
  notBefore: number;
  /** GCE upcoming-maintenance: the latest start the window may move to (its id). */
  readonly latest?: number;
  /** When its maintenance became due (the start passed, or the agent approved it). */
  dueAt?: number;
}

export type MutableNotice = { -readonly [K in keyof NoticeHistory]: NoticeHistory[K] } & {
  reschedules: { at: number; notBefore: string }[];
};

export type CloudNode = Fake & {
  readonly node: string;
  readonly agent: Replica;
  standing: Standing | undefined;
};

export interface AgentSettings {
  readonly kubeconfig: string;
  readonly busUrl: string;
  readonly busKey: string;
  readonly busCa: string;
  readonly dir: string;
}

async function startFake(provider: CloudProvider, node: string): Promise<Fake> {
  if (provider === 'aws') return { provider, fake: await FakeEc2Metadata.start({ instanceId: instanceIdOf(node) }) };
  if (provider === 'azure')
    return { provider, fake: await FakeAzureMetadata.start({ vmName: node, onApproval: 'start' }) };
  return { provider, fake: await FakeGceMetadata.start() };
}

const URL_ENV: Record<CloudProvider, string> = {
  aws: 'DRAINBRIDGE_AGENT_AWS_URL',
  azure: 'DRAINBRIDGE_AGENT_AZURE_URL',
  gcp: 'DRAINBRIDGE_AGENT_GCP_URL',
};

/** A fake metadata server and a node agent process (not started) for each cloud node. */
export async function startClouds(nodes: readonly string[], settings: AgentSettings): Promise<CloudNode[]> {
  const out: CloudNode[] = [];
  for (const { provider, index } of CLOUD_NODES) {
    const node = nodes[index] as string;
    const fake = await startFake(provider, node);
    const args = [
      'forwarder',
      '--node-agent',
      '--node',
      node,
      '--provider',
      provider,
      '--kubeconfig',
      settings.kubeconfig,
      '--metrics-address',
      '127.0.0.1:0',
      '--bus-endpoint',
      settings.busUrl,
    ];
    const env = {
      POWERTOOLS_LOG_LEVEL: 'INFO',
      DRAINBRIDGE_BUS_KEY: settings.busKey,
      DRAINBRIDGE_BUS_CA: settings.busCa,
      [URL_ENV[provider]]: fake.fake.url,
      DRAINBRIDGE_AGENT_POLL_SECONDS: '2',
      DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS: '2',
      DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS: '5',
    };
    out.push({ ...fake, node, agent: new Replica(`agent-${provider}`, args, env, settings.dir), standing: undefined });
  }
  return out;
}

export async function stopClouds(clouds: readonly CloudNode[]): Promise<void> {
  for (const cloud of clouds) {
    await cloud.agent.stop('SIGTERM');
    await cloud.fake.server.stop();
  }
}

const MINUTE = 60_000;
const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString();

function awsEvent(eventId: string, notBefore: number, state: string) {
  return {
    NotBefore: formatEc2ImdsDate(new Date(notBefore)),
    Code: 'system-reboot',
    Description: 'scheduled reboot',
    EventId: eventId,
    NotAfter: formatEc2ImdsDate(new Date(notBefore + 2 * 3_600_000)),
    State: state,
  };
}

function azureEvent(eventId: string, node: string, notBefore: number) {
  return {
    EventId: eventId,
    EventStatus: 'Scheduled',
    EventType: 'Reboot',
    ResourceType: 'VirtualMachine',
    Resources: [node],
    NotBefore: formatRfc1123(new Date(notBefore)),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
  };
}

function gceUpcoming(notBefore: number, latest: number) {
  return {
    can_reschedule: 'true',
    latest_window_start_time: iso(latest),
    maintenance_reasons: ['PLANNED_UPDATE'],
    maintenance_status: 'PENDING',
    type: 'SCHEDULED',
    window_end_time: iso(latest + 60 * MINUTE),
    window_start_time: iso(notBefore),
  };
}

/** Serves the standing notice's current form on the cloud's fake. */
function serve(cloud: CloudNode, standing: Standing): void {
  if (cloud.provider === 'aws')
    cloud.fake.setScheduledEvents([awsEvent(standing.eventId, standing.notBefore, 'active')]);
  else if (cloud.provider === 'azure')
    cloud.fake.putEvent(azureEvent(standing.eventId, cloud.node, standing.notBefore));
  else if (standing.scheduled)
    cloud.fake.setUpcomingMaintenance(gceUpcoming(standing.notBefore, standing.latest ?? standing.notBefore));
  else cloud.fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
}

/** Announces a notice on a cloud node with none standing; returns its kind for the count, or undefined. */
export function announceNotice(
  clouds: readonly CloudNode[],
  notices: MutableNotice[],
  random: Random,
  serial: number,
): string | undefined {
  const free = clouds.filter((c) => !c.standing);
  if (free.length === 0) return undefined;
  const cloud = random.pick(free);
  const now = Date.now();
  const notBefore = now + random.int(3 * 60, 9 * 60) * 1000;
  const atOnce = cloud.provider === 'gcp' && random.chance(0.5);
  const what = {
    aws: 'system-reboot',
    azure: 'Reboot',
    gcp: atOnce ? 'MIGRATE_ON_HOST_MAINTENANCE' : 'upcoming-maintenance',
  }[cloud.provider];
  const eventId =
    cloud.provider === 'aws'
      ? `instance-event-0soak${String(serial).padStart(12, '0')}`
      : `5DD55B64-45AD-49D3-BBC9-${String(serial).padStart(12, '0')}`;
  const standing: Standing = {
    history: {
      provider: cloud.provider,
      node: cloud.node,
      what,
      requestPrefix: `${cloud.provider}:${cloud.node}:`,
      announcedAt: now,
      reschedules: [],
    },
    eventId,
    scheduled: !atOnce,
    notBefore: atOnce ? now : notBefore,
    ...(cloud.provider === 'gcp' && !atOnce ? { latest: now + 14 * MINUTE } : {}),
  };
  cloud.standing = standing;
  notices.push(standing.history);
  serve(cloud, standing);
  return `cloud notice announced (${cloud.provider} ${what})`;
}

/**
 * Moves a standing notice's start earlier or later, within what its cloud allows: EC2's
 * ModifyInstanceEventStartTime only before the event starts (5 minutes) and only to 60 minutes ahead or
 * more (the fake refuses otherwise: not counted); Azure and GCE within the window's latest start.
 */
export function rescheduleNotice(clouds: readonly CloudNode[], random: Random): string | undefined {
  // Not once due: an Azure event the agent approved has started (Started, NotBefore ""), it no longer moves.
  const movable = clouds.filter(
    (c) =>
      c.standing?.scheduled &&
      c.standing.dueAt === undefined &&
      !(c.provider === 'azure' && c.fake.approved(c.standing.eventId)) &&
      c.standing.notBefore > Date.now() + 60_000,
  );
  if (movable.length === 0) return undefined;
  const cloud = random.pick(movable);
  const standing = cloud.standing as Standing;
  const now = Date.now();
  let to: number;
  if (cloud.provider === 'aws') {
    to = now + random.int(61, 66) * MINUTE;
    try {
      cloud.fake.rescheduleEvent(standing.eventId, new Date(to));
    } catch {
      return undefined;
    }
  } else {
    const latest = standing.latest ?? now + 12 * MINUTE;
    to = now + random.int(90, Math.max(91, Math.floor((latest - now) / 1000) - 10)) * 1000;
  }
  const direction = to < standing.notBefore ? 'earlier' : 'later';
  standing.notBefore = Math.floor(to / 1000) * 1000;
  if (cloud.provider !== 'aws') serve(cloud, standing);
  standing.history.reschedules.push({ at: now, notBefore: iso(to) });
  return `cloud notice rescheduled ${direction} (${cloud.provider})`;
}

/** Takes a notice away: withdrawn (the provider cancelled it) or completed (its maintenance happened). */
function end(cloud: CloudNode, how: 'withdrawn' | 'completed'): void {
  const standing = cloud.standing;
  if (!standing) return;
  if (cloud.provider === 'aws')
    cloud.fake.setScheduledEvents([
      awsEvent(standing.eventId, standing.notBefore, how === 'withdrawn' ? 'canceled' : 'completed'),
    ]);
  else if (cloud.provider === 'azure') cloud.fake.removeEvent(standing.eventId);
  else if (standing.scheduled) cloud.fake.setUpcomingMaintenance({});
  else cloud.fake.setMaintenanceEvent('NONE');
  standing.history.goneAt = Date.now();
  standing.history.gone = how;
  cloud.standing = undefined;
}

/** The provider cancels a standing notice before its maintenance. */
export function withdrawNotice(clouds: readonly CloudNode[], random: Random): string | undefined {
  const standing = clouds.filter(
    (c) => c.standing && (c.standing.scheduled ? c.standing.notBefore > Date.now() : true),
  );
  if (standing.length === 0) return undefined;
  const cloud = random.pick(standing);
  end(cloud, 'withdrawn');
  return `cloud notice withdrawn (${cloud.provider})`;
}

/**
 * The providers' side, every loop: a notice whose maintenance is due is done a minute later — the
 * scheduled start passed (an Azure event approved by the agent starts at once), or a GCE
 * maintenance-event stood a minute. Returns the kinds completed (for the counts).
 */
export function tickNotices(clouds: readonly CloudNode[]): string[] {
  const done: string[] = [];
  const now = Date.now();
  for (const cloud of clouds) {
    const standing = cloud.standing;
    if (!standing) continue;
    const approved = cloud.provider === 'azure' && cloud.fake.approved(standing.eventId);
    if (standing.dueAt === undefined && (approved || now >= standing.notBefore)) standing.dueAt = now;
    if (standing.dueAt !== undefined && now - standing.dueAt >= (approved ? 30_000 : 60_000)) {
      end(cloud, 'completed');
      done.push(`cloud notice completed (${cloud.provider})`);
    }
  }
  return done;
}

/** The epilogue: every notice still standing is withdrawn. */
export function withdrawAll(clouds: readonly CloudNode[]): void {
  for (const cloud of clouds) end(cloud, 'withdrawn');
}
