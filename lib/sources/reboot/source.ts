/**
 * The reboot source: ends a maintenance when its node has rebooted and is Ready again, for holds whose
 * maintenance a reboot ends (a maintenance window with `endsOn: reboot`): it watches nodes (its own
 * informer: the shared one keeps no status) and offers `Maintenance Ended` for each such hold whose
 * recorded boot ID is no longer the node's (decide.ts). Like every source it offers only while leading;
 * a repeat (another leader, a restart) is the same requestId, and Restore is idempotent.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import { ResilientInformer, type RestartReason } from '../../clients/kube/http/informer.ts';
import type { Logger } from '../../log/logger.ts';
import { LEDGER_ANNOTATION } from '../../node/ledger.ts';
import { NodeSource } from '../node-source.ts';
import type { EventOutlet } from '../types.ts';
import { rebootEnds, trimForReboot } from './decide.ts';

export const REBOOT_REQUESTER = 'drainbridge-forwarder/reboot';

export interface RebootSourceParts {
  /** The forwarder's lean client (lib/clients/kube/http). */
  readonly client: KubeHttpClient;
  readonly logger: Logger;
  readonly onRestart?: (reason: RestartReason) => void;
  readonly watchTimeoutSeconds?: number;
}

export class RebootSource extends NodeSource {
  readonly name = 'reboot';
  readonly #logger: Logger;

  constructor(parts: RebootSourceParts) {
    super(
      new ResilientInformer<V1Node>({
        resource: 'nodes',
        path: '/api/v1/nodes',
        client: parts.client,
        transform: (node) => trimForReboot(node, LEDGER_ANNOTATION),
        logger: parts.logger,
        ...(parts.onRestart ? { onRestart: parts.onRestart } : {}),
        ...(parts.watchTimeoutSeconds ? { watchTimeoutSeconds: parts.watchTimeoutSeconds } : {}),
      }),
    );
    this.#logger = parts.logger;
  }

  /** Its own informer (the shared one keeps no status): started here, stopped with the source. */
  override async start(outlet: EventOutlet): Promise<void> {
    await super.start(outlet);
    this.nodes.start();
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.nodes.stop();
  }

  protected reconcile(node: V1Node): void {
    const nodeName = node.metadata?.name ?? '';
    for (const end of rebootEnds(node)) {
      if (!this.term.offerOnce('Maintenance Ended', end.requestId)) continue;
      const reason = `node ${nodeName} rebooted (boot ID ${end.bootIdBefore} → ${end.bootIdNow}) and is Ready`;
      this.#logger.info('node rebooted: maintenance ends', { node: nodeName, requestId: end.requestId });
      this.outlet?.offer({
        detailType: 'Maintenance Ended',
        key: `reboot/${nodeName}/${end.requestId}`,
        detail: {
          version: '1',
          requestId: end.requestId,
          requester: REBOOT_REQUESTER,
          origin: end.origin,
          target: { nodeName },
          reason,
        },
      });
    }
  }
}
