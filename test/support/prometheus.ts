/**
 * A real Prometheus (the Debian package's binary) for the health gate tests: its own temporary directory,
 * loopback, a free port, scraping every second a small exporter on loopback whose metric the test sets,
 * and one rule file whose alert `NodeUnhealthy` fires (labels from the series, `node` among them) while
 * `fleet_node_unhealthy` is above zero. Tests that need it skip, saying why, only when the binary is absent
 * (.ci/run installs it).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from './wait.ts';

/** The first of `candidates` that answers `--version`, or undefined (a Debian daemon's binary, or an override). */
export function findBinary(candidates: readonly (string | undefined)[]): string | undefined {
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}

/** The binary's path, or undefined when Prometheus is not installed (`apt-get install prometheus`). */
export function findPrometheus(): string | undefined {
  return findBinary([process.env.PROMETHEUS_BINARY, '/usr/bin/prometheus']);
}

export const PROMETHEUS_MISSING =
  'the real Prometheus is not installed (apt-get install prometheus; .ci/run installs it): the gate tests against it are skipped';

/** A free loopback port (the moment between closing it and Prometheus binding it is a tiny race). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The exporter the test controls: `fleet_node_unhealthy{node=…}` per node, 0 or more. */
export class Exporter {
  readonly values = new Map<string, number>();
  readonly #server: Server;
  port = 0;

  constructor() {
    this.#server = createServer((_request, response) => {
      const lines = ['# TYPE fleet_node_unhealthy gauge'];
      for (const [node, value] of this.values) lines.push(`fleet_node_unhealthy{node="${node}"} ${value}`);
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${lines.join('\n')}\n`);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no exporter port');
    this.port = address.port;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

export interface RealPrometheus {
  readonly url: string;
  readonly exporter: Exporter;
  /** Resolves once Prometheus's alert NodeUnhealthy for `node` is in `state` (`absent`: not active). */
  waitForAlert(node: string, state: 'firing' | 'absent', limitMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const RULES = `groups:
  - name: fleet
    interval: 1s
    rules:
      - alert: NodeUnhealthy
        expr: fleet_node_unhealthy > 0
        labels:
          severity: critical
`;

function configOf(exporterPort: number, rulesPath: string, alertmanager?: string): string {
  // Prometheus sends its firing alerts to Alertmanager as in production: alerting.alertmanagers.
  const alerting = alertmanager
    ? `alerting:
  alertmanagers:
    - static_configs:
        - targets: ['${alertmanager}']
`
    : '';
  return `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [${JSON.stringify(rulesPath)}]
${alerting}scrape_configs:
  - job_name: fleet
    static_configs:
      - targets: ['127.0.0.1:${exporterPort}']
`;
}

interface AlertsAnswer {
  data: { alerts: { labels: Record<string, string>; state: string }[] };
}

/** `alertmanager`: `host:port` of an Alertmanager Prometheus sends its alerts to. */
export async function startPrometheus(
  binary: string,
  options: { readonly alertmanager?: string } = {},
): Promise<RealPrometheus> {
  const exporter = new Exporter();
  await exporter.start();
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-prometheus-'));
  writeFileSync(join(dir, 'rules.yml'), RULES);
  writeFileSync(join(dir, 'prometheus.yml'), configOf(exporter.port, join(dir, 'rules.yml'), options.alertmanager));
  const port = await freePort();
  const output: string[] = [];
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.console.templates=/dev/null',
      '--web.console.libraries=/dev/null',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitUntil(
    'Prometheus is ready',
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true,
    60_000,
    {
      everyMs: 200,
      context: () => output.join('').slice(-2000),
    },
  );
  const alertState = async (node: string): Promise<string> => {
    const answer = (await (await fetch(`${url}/api/v1/alerts`)).json()) as AlertsAnswer;
    return (
      answer.data.alerts.find((a) => a.labels.alertname === 'NodeUnhealthy' && a.labels.node === node)?.state ??
      'absent'
    );
  };
  return {
    url,
    exporter,
    waitForAlert: (node, state, limitMs = 60_000) =>
      waitUntil(
        `alert NodeUnhealthy{node="${node}"} ${state}`,
        async () => (await alertState(node)) === state,
        limitMs,
        {
          everyMs: 250,
        },
      ),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await exporter.stop();
    },
  };
}
