/**
 * The Nova half of the soak's checker (`--nova`): pure, over the NovaHistory the soak sampled from Nova's
 * own API (log.ts), never drainbridge's records. Each judge answers the facts it judged and each breach,
 * naming the compute host (and the soak node that is it) or the server.
 */
import type { NovaHistory, NovaServiceState, OperatorNovaDisable, RequestHistory } from './log.ts';

interface Judged {
  readonly checked: number;
  readonly broken: readonly string[];
}

/** drainbridge disables with `drainbridge:<requestId>: …` (docs/nova.md). */
const DRAINBRIDGE_REASON = /^drainbridge:([^:]+):/;

const isDrainbridges = (state: NovaServiceState): boolean =>
  state.status === 'disabled' && DRAINBRIDGE_REASON.test(state.reason ?? '');

/** The statuses a server keeps while drainbridge live-migrates it; any other is a server stopped, broken or lost. */
const RUNNING = new Set(['ACTIVE', 'MIGRATING']);

const when = (at: number): string => new Date(at).toISOString();

function hostName(nova: NovaHistory, host: string): string {
  const node = nova.nodeOf[host];
  return node ? `${host} (node ${node})` : host;
}

/** What became of an operator's disable while it stood, from the samples and from what they found: the first breach, if any. */
function operatorDisableBreach(nova: NovaHistory, d: OperatorNovaDisable): string | undefined {
  const stood = `an operator's disable ("${d.reason}", since ${when(d.from)}) stood`;
  const where = `nova-compute on ${hostName(nova, d.host)}`;
  const seen = nova.serviceChanges.filter(
    (c) => c.host === d.host && c.at >= d.from && (d.until === undefined || c.at < d.until),
  );
  const atEnd = d.until === undefined ? nova.servicesAtEnd[d.host] : undefined;
  const found: (NovaServiceState & { at: number })[] = [
    ...seen,
    ...(d.foundBeforeEnable && d.until !== undefined ? [{ ...d.foundBeforeEnable, at: d.until }] : []),
    ...(atEnd ? [{ ...atEnd, at: Number.POSITIVE_INFINITY }] : []),
  ];
  for (const state of found) {
    const at = Number.isFinite(state.at) ? `at ${when(state.at)}` : 'at the end';
    if (state.status === 'enabled') return `${where} was enabled again ${at} while ${stood}: not drainbridge's to undo`;
    if (state.reason !== d.reason) {
      return `${where} had its disable reason replaced with "${state.reason ?? ''}" ${at} while ${stood}`;
    }
  }
  return undefined;
}

/** The request a drainbridge reason names, and how it ended, for the breach's words. */
function requestOf(reason: string | undefined, requests: readonly RequestHistory[]): string {
  const id = DRAINBRIDGE_REASON.exec(reason ?? '')?.[1];
  if (!id) return '';
  const request = requests.find((r) => r.requestId === id);
  return `; request ${id} ${request ? `ended ${request.outcome ?? 'never'}` : 'has no record'}`;
}

/**
 * `nova-reenabled`: at the end (every maintenance ended) no service is disabled by drainbridge — each it
 * disabled was enabled again after its restore — nor by anyone but an operator whose disable still stands;
 * and while an operator's disable stood, nobody enabled the service or replaced the operator's reason.
 */
export function novaReenabled(nova: NovaHistory | undefined, requests: readonly RequestHistory[]): Judged {
  if (!nova) return { checked: 0, broken: [] };
  const broken: string[] = [];
  const standing = new Map(nova.operatorDisables.filter((d) => d.until === undefined).map((d) => [d.host, d]));
  for (const [host, state] of Object.entries(nova.servicesAtEnd)) {
    if (state.status === 'enabled') continue;
    const where = `nova-compute on ${hostName(nova, host)}`;
    if (isDrainbridges(state)) {
      broken.push(
        `${where} is left disabled by drainbridge after every maintenance ended (reason "${state.reason}"${requestOf(state.reason, requests)})`,
      );
    } else if (standing.get(host)?.reason !== state.reason) {
      broken.push(
        `${where} is left disabled (reason "${state.reason ?? ''}"), not by an operator's disable that still stands; it was enabled at the start`,
      );
    }
  }
  for (const d of nova.operatorDisables) {
    const breach = operatorDisableBreach(nova, d);
    if (breach) broken.push(breach);
  }
  const drainbridgeDisables = nova.serviceChanges.filter(isDrainbridges).length;
  return {
    checked: Object.keys(nova.servicesAtEnd).length + nova.operatorDisables.length + drainbridgeDisables,
    broken,
  };
}

/**
 * The Nova part of `no-vm-lost`: every server booted at the start is ACTIVE at the end (the same id), and no
 * sample ever saw it other than ACTIVE or MIGRATING (SHUTOFF, ERROR, deleted…).
 */
export function novaServersKept(nova: NovaHistory | undefined): Judged {
  if (!nova) return { checked: 0, broken: [] };
  const broken = new Set<string>();
  for (const server of nova.servers) {
    const name = `Nova server ${server.name} (${server.id})`;
    for (const change of nova.serverChanges.filter((c) => c.id === server.id && !RUNNING.has(c.status))) {
      broken.add(
        change.status === 'GONE'
          ? `${name} was gone (Nova listed it no more) at ${when(change.at)}`
          : `${name} was ${change.status} on ${hostName(nova, change.host ?? '?')} at ${when(change.at)}`,
      );
    }
    const end = nova.serversAtEnd[server.id];
    if (!end || end.status === 'GONE') broken.add(`${name} is gone at the end (Nova lists it no more)`);
    else if (end.status !== 'ACTIVE') {
      broken.add(`${name} is ${end.status} on ${hostName(nova, end.host ?? '?')} at the end, not ACTIVE`);
    }
  }
  return { checked: nova.servers.length, broken: [...broken] };
}
