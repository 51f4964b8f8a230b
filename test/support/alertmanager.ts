/**
 * A real Alertmanager (the Debian package `prometheus-alertmanager`) for the alertmanager gate's tests:
 * its own temporary directory, loopback, a free port, clustering off, one receiver that notifies nobody.
 * Alerts reach it the real way — a real Prometheus (support/prometheus.ts) with `alerting.alertmanagers`
 * pointing at it — and silences are made through its API v2, as `amtool silence add` does. Tests that
 * need it skip, saying why, only when the binary is absent (.ci/run installs it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, freePort } from './prometheus.ts';
import { waitUntil } from './wait.ts';

/** The binary's path, or undefined when Alertmanager is not installed. */
export function findAlertmanager(): string | undefined {
  return findBinary([process.env.ALERTMANAGER_BINARY, '/usr/bin/prometheus-alertmanager']);
}

export const ALERTMANAGER_MISSING =
  'the real Alertmanager is not installed (apt-get install prometheus-alertmanager; .ci/run installs it): the gate tests against it are skipped';

const CONFIG = `route:
  receiver: nobody
  group_wait: 1s
receivers:
  - name: nobody
`;

interface AmAlert {
  labels: Record<string, string>;
  status: { state: string };
}

export interface RealAlertmanager {
  readonly url: string;
  /** `127.0.0.1:PORT`, for Prometheus's alerting configuration. */
  readonly address: string;
  /** Resolves once Alertmanager holds `alertname{node}` in `state` (`absent`: not held, or resolved). */
  waitForAlert(alertname: string, node: string, state: 'active' | 'suppressed' | 'absent'): Promise<void>;
  /** Silences `name=value` for an hour through the API v2; returns the silence's id. */
  silence(name: string, value: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startAlertmanager(binary: string): Promise<RealAlertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), CONFIG);
  const port = await freePort();
  const output: string[] = [];
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // No gossip port: one instance, and nothing listening beyond loopback.
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitUntil(
    'Alertmanager is ready',
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true,
    60_000,
    { everyMs: 200, context: () => output.join('').slice(-2000) },
  );
  const stateOf = async (alertname: string, node: string): Promise<string> => {
    const alerts = (await (await fetch(`${url}/api/v2/alerts?active=true`)).json()) as AmAlert[];
    const found = alerts.find((a) => a.labels.alertname === alertname && a.labels.node === node);
    return found?.status.state ?? 'absent';
  };
  return {
    url,
    address: `127.0.0.1:${port}`,
    waitForAlert: (alertname, node, state) =>
      waitUntil(
        `Alertmanager holds ${alertname}{node="${node}"} ${state}`,
        async () => (await stateOf(alertname, node)) === state,
        90_000,
        { everyMs: 250, context: () => output.join('').slice(-2000) },
      ),
    async silence(name, value) {
      const now = Date.now();
      const response = await fetch(`${url}/api/v2/silences`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          matchers: [{ name, value, isRegex: false, isEqual: true }],
          startsAt: new Date(now - 1000).toISOString(),
          endsAt: new Date(now + 3_600_000).toISOString(),
          createdBy: 'drainbridge test',
          comment: 'known: being repaired',
        }),
      });
      const answer = (await response.json()) as { silenceID?: string };
      if (!response.ok || !answer.silenceID) throw new Error(`silence refused: ${response.status}`);
      return answer.silenceID;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
