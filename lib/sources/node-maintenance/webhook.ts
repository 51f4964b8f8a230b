/**
 * The NodeMaintenance validating admission webhook, served over HTTPS by every replica of the process
 * that serves NodeMaintenance (the forwarder, `drainbridge run`): NMO's checks (admission.ts), with the
 * facts read live for each CREATE — the node, the group's NodeMaintenances, the etcd members — as NMO's
 * webhook reads them. Its certificate comes from webhook-cert.ts and can be swapped while serving
 * (webhook-rotation.ts). One path per served group, NMO's path
 * for medik8s's. A request that is not an AdmissionReview gets a 400 with what is wrong, and nothing is
 * read from the cluster for it; an API read that fails refuses the request with NMO's "please try again".
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { V1Node } from '@kubernetes/client-node';
import { isControlPlaneNode, quorumBlocker } from '../../branches/pods/quorum.ts';
import { ETCD_POD_SELECTOR } from '../../branches/pods/quorum-guard.ts';
import { isNotFound } from '../../clients/kube/errors.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import type { Logger } from '../../log/logger.ts';
import type { WebhookCertificates } from '../../tls/self-signed.ts';
import { listen } from '../../util/listen.ts';
import {
  type AdmissionFacts,
  admissionRefusal,
  admissionResponse,
  type NodeMaintenanceAdmission,
  needsFacts,
  parseAdmissionReview,
} from './admission.ts';
import type { NodeMaintenance, NodeMaintenanceFlavor } from './types.ts';

/** The path of a group's webhook: kubebuilder's, as NMO serves medik8s's. */
export const webhookPath = (flavor: NodeMaintenanceFlavor): string =>
  `/validate-${flavor.api.group.replaceAll('.', '-')}-${flavor.api.version}-nodemaintenance`;

/** A larger body is no AdmissionReview for a NodeMaintenance (the API server's own limit is 3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface WebhookServerOptions {
  readonly host: string;
  readonly port: number;
  readonly certificates: WebhookCertificates;
  readonly client: KubeHttpClient;
  readonly flavors: readonly NodeMaintenanceFlavor[];
  readonly logger: Logger;
}

export interface WebhookServer {
  /** https://host:port */
  readonly url: string;
  /** Serves `certificates` to every new connection from now on (open ones keep theirs until they close). */
  useCertificates(certificates: WebhookCertificates): void;
  close(): Promise<void>;
}

/**
 * The request itself is wrong (400), or sent where or how no webhook answers (404, 405, 413). An HTTP
 * answer of this server only, never thrown to a state machine: so no error name of its own, which would
 * belong in lib/errors/registry.ts.
 */
class BadRequest extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.status = status;
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`the body exceeds ${MAX_BODY_BYTES} bytes`, 413);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new BadRequest(`the body is not JSON: ${(error as Error).message}`);
  }
}

/** NMO's getNode: undefined when there is none such. */
async function nodeNamed(client: KubeHttpClient, name: string): Promise<V1Node | undefined> {
  try {
    return await client.getNode(name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** What a CREATE is decided from, read in NMO's order (no node: nothing more is read). */
async function readFacts(
  client: KubeHttpClient,
  flavor: NodeMaintenanceFlavor,
  nodeName: string,
): Promise<AdmissionFacts> {
  const node = nodeName ? await nodeNamed(client, nodeName) : undefined;
  if (!node) return { node, maintainedNodes: [], quorum: undefined };
  const stored = await client.listClusterObjects<NodeMaintenance>(flavor.api);
  const maintainedNodes = stored.map((nm) => nm.spec?.nodeName ?? '');
  if (maintainedNodes.includes(nodeName)) return { node, maintainedNodes, quorum: undefined };
  // lib/branches/pods/quorum-guard.ts's reads: the etcd pods; the nodes only when none is visible.
  const etcdPods = await client.listPods({ namespace: 'kube-system', labelSelector: ETCD_POD_SELECTOR });
  const nodes = etcdPods.length > 0 || !isControlPlaneNode(node) ? [] : await client.listNodes();
  return { node, maintainedNodes, quorum: quorumBlocker(node, nodes, etcdPods) };
}

async function decide(
  options: WebhookServerOptions,
  flavor: NodeMaintenanceFlavor,
  admission: NodeMaintenanceAdmission,
): Promise<string | undefined> {
  if (!needsFacts(admission)) return admissionRefusal(admission);
  try {
    return admissionRefusal(admission, await readFacts(options.client, flavor, admission.nodeName));
  } catch (error) {
    // NMO's answer when it cannot read what it decides from.
    return `could not get node for validating spec.NodeName, please try again: ${(error as Error).message}`;
  }
}

async function handle(options: WebhookServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const flavor = options.flavors.find((f) => webhookPath(f) === path);
  if (!flavor) throw new BadRequest(`no webhook at ${path}: ${options.flavors.map(webhookPath).join(', ')}`, 404);
  if (req.method !== 'POST') throw new BadRequest(`${req.method} is not POST`, 405);
  const admission = parseAdmissionReview(await readBody(req));
  if (typeof admission === 'string') throw new BadRequest(admission);
  const refusal = await decide(options, flavor, admission);
  if (refusal) options.logger.info('NodeMaintenance refused at admission', { operation: admission.operation, refusal });
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify(admissionResponse(admission.uid, refusal)));
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const server: Server = createServer(
    { key: options.certificates.key, cert: options.certificates.cert },
    (req, res) => {
      handle(options, req, res).catch((error: unknown) => {
        const status = error instanceof BadRequest ? error.status : 500;
        if (!(error instanceof BadRequest))
          options.logger.warn('admission webhook request failed', { error: String(error) });
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(`${error instanceof Error ? error.message : String(error)}\n`);
      });
    },
  );
  const listening = await listen(server, { host: options.host, port: options.port, scheme: 'https' });
  return {
    ...listening,
    useCertificates: (certificates) => server.setSecureContext({ key: certificates.key, cert: certificates.cert }),
  };
}
