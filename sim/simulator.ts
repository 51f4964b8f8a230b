/**
 * The simulator as one object: store + control loops + HTTP API on 127.0.0.1. This is what tests,
 * benchmarks, the demo and `drainbridge sim` start.
 */
import type { AddressInfo, Socket } from 'node:net';
import { ADMIN_USER, TokenAuthenticator } from './auth/authenticator.ts';
import { installBootstrapRbac } from './auth/bootstrap.ts';
import { type ControllerOptions, type Controllers, type KubeVirt, startControllers } from './controllers/index.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { applyManifests } from './manifests.ts';
import { loadScenario, parseScenario, type Scenario, startScenario } from './scenarios/index.ts';
import { createApiServer } from './server/api-server.ts';
import { FaultInjector } from './server/faults.ts';
import { RequestLog } from './server/request-log.ts';
import { validatingWebhooks } from './server/webhooks/index.ts';
import { createClock } from './store/clock.ts';
import { type ClosableStore, createStore } from './store/memory-store.ts';
import type { Clock, KubeObject, UserInfo } from './store/types.ts';
import { generateServingCertificate } from './tls.ts';

/** The Kubernetes version the simulator reports; kubectl's dispatcher picks its client from it. */
export const SIMULATED_VERSION: Record<string, string> = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4',
  gitCommit: '59526cd4867447956156ae3a602fcbac5b8f5ee4',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T16:02:27Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export interface SimulatorOptions {
  /** A bundled scenario name (`small`, `busy-node`), a scenario file path, scenario YAML as an object, or a loaded Scenario. */
  scenario?: string | Scenario | Record<string, unknown>;
  /** Clock speed; defaults to the scenario's, else 1 (real time). */
  speed?: number;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Start the control loops (default true). */
  controllers?: boolean;
  /** Overrides for the control loops (timings, static pods). */
  controllerOptions?: ControllerOptions;
  /**
   * Serve HTTPS with a fresh self-signed certificate (default true). kubectl sends bearer tokens only
   * over TLS; plain HTTP suits in-process clients. Falls back to HTTP when `openssl` is missing.
   */
  tls?: boolean;
  /** Store changes kept for resuming watches (default 10 000); older resourceVersions get 410 Expired. */
  historySize?: number;
  /** Requests the request log keeps, oldest out first (default 100 000; the 5,000-node benchmark makes more). */
  requestLogSize?: number;
}

/** A running simulator. */
export interface Simulator {
  /** `https://127.0.0.1:<port>` (or `http://` without TLS). */
  readonly url: string;
  /** The serving certificate (PEM), to trust as CA; undefined over plain HTTP. */
  readonly caPem: string | undefined;
  /** A token for `kubernetes-admin` (group `system:masters`). */
  readonly adminToken: string;
  readonly store: ClosableStore;
  readonly clock: Clock;
  readonly requestLog: RequestLog;
  /** The loaded scenario, if any. */
  readonly scenario: Scenario | undefined;
  /**
   * The simulated KubeVirt (faults, migration history, KubeVirt CR settings), when the scenario has a
   * `kubevirt:` section or `controllerOptions.kubevirt` was given; undefined otherwise.
   */
  readonly kubevirt: KubeVirt | undefined;
  /** Fault injection for clients under test: dropped watches, 410 Expired, 5xx for a while (sim/server/faults.ts). */
  readonly faults: FaultInjector;
  /** A kubeconfig (YAML) for this simulator with `token` (default: the admin token). */
  kubeconfig(token?: string): string;
  /**
   * A bearer token for ServiceAccount `namespace/name` (creates the account when missing; the
   * namespace must exist). Its permissions are whatever RBAC objects bind to it.
   */
  tokenFor(serviceAccount: string | { namespace: string; name: string }): Promise<string>;
  /** A bearer token for an arbitrary user (tests of RBAC by user or group). */
  tokenForUser(user: UserInfo): string;
  /**
   * Creates or replaces the objects of YAML manifests (e.g. `deploy/base/rbac/*.yaml`) directly in the
   * store, as the admin would with `kubectl apply`; returns them as stored.
   */
  apply(yaml: string, source?: string): KubeObject[];
  /** Stops the HTTP server, the control loops, every watch and the clock. */
  stop(): Promise<void>;
}

function resolveScenario(input: SimulatorOptions['scenario']): Scenario | undefined {
  if (input === undefined) return undefined;
  if (typeof input === 'string') return loadScenario(input);
  if (Array.isArray((input as Scenario).objects) && typeof (input as Scenario).source === 'string') {
    return input as Scenario;
  }
  return parseScenario(JSON.stringify(input), 'inline scenario');
}

function parseAccount(serviceAccount: string | { namespace: string; name: string }): {
  namespace: string;
  name: string;
} {
  if (typeof serviceAccount !== 'string') return serviceAccount;
  const [namespace, name, extra] = serviceAccount.split('/');
  if (!namespace || !name || extra !== undefined) {
    throw new RangeError(`serviceAccount: expected "namespace/name", got "${serviceAccount}"`);
  }
  return { namespace, name };
}

const SERVICE_ACCOUNTS = { group: '', resource: 'serviceaccounts' };

/** Starts a simulator; resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const scenario = resolveScenario(options.scenario);
  const speed = options.speed ?? scenario?.speed ?? 1;
  const store = createStore({ clock: createClock(speed), historySize: options.historySize ?? 10_000 });
  installBootstrapRbac(store);
  store.admission.add(validatingWebhooks(store));
  const authenticator = new TokenAuthenticator();
  const adminToken = authenticator.issue(ADMIN_USER);
  const requestLog = new RequestLog(options.requestLogSize);
  let controllers: Controllers | undefined;
  if (options.controllers !== false) {
    controllers = scenario
      ? startScenario(store, scenario, options.controllerOptions)
      : startControllers(store, options.controllerOptions);
  }
  const tls = options.tls === false ? undefined : generateServingCertificate();
  const faults = new FaultInjector();
  const server = createApiServer({ store, authenticator, version: SIMULATED_VERSION, faults }, requestLog, tls);
  // Every TCP connection, from accept on: closeAllConnections() knows only connections that have become
  // HTTP ones, and with TLS a connection still in its handshake is not one yet — stop() waited for it
  // (up to the handshake timeout, or for ever once it carried a watch on the stopped store).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    // A port in use: leave nothing running behind.
    controllers?.stop();
    store.close();
    throw error;
  }
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    adminToken,
    caPem: tls?.cert,
    store,
    clock: store.clock,
    requestLog,
    scenario,
    kubevirt: controllers?.kubevirt,
    faults,
    kubeconfig: (token = adminToken) => renderKubeconfig(url, token, tls?.cert),
    tokenFor: async (serviceAccount) => {
      const { namespace, name } = parseAccount(serviceAccount);
      const account =
        store.get(SERVICE_ACCOUNTS, namespace, name) ??
        store.create(SERVICE_ACCOUNTS, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
      return authenticator.issueForServiceAccount(namespace, name, account.metadata.uid);
    },
    tokenForUser: (user) => authenticator.issue(user),
    apply: (yaml, source) => applyManifests(store, yaml, source),
    stop: async () => {
      controllers?.stop();
      store.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
