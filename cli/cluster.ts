/**
 * A command's connection to the cluster: the configuration (environment + --kubeconfig/--context), the
 * KubeConfig and the one client — and the preflight, whose failures are told here in plain words.
 */

import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../lib/clients/kube/client.ts';
import { buildKubeConfig, type Config, checkKubeconfigFile } from '../lib/config/index.ts';
import { type Operation, type PreflightNeeds, type PreflightReport, runPreflight } from '../lib/preflight/index.ts';
import type { CommandContext } from './command.ts';
import { configOf } from './common-flags.ts';
import { expectPositionals, type FlagSpec, flagValue, type ParsedCommandLine, parseCommandLine } from './flags.ts';

export interface Cluster {
  readonly config: Config;
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
}

export async function connect(
  parsed: ParsedCommandLine,
  context: CommandContext,
  options: { chunkSize?: number } = {},
): Promise<Cluster> {
  const config = configOf(parsed, context.env);
  if (config.kube.source === 'kubeconfig') {
    const path = config.kube.path ?? join(homedir(), '.kube', 'config');
    const setting = flagValue(parsed, 'context') ? '--context' : 'DRAINBRIDGE_KUBE_CONTEXT';
    const chosen = config.kube.context ? { name: config.kube.context, setting } : {};
    checkKubeconfigFile(path, chosen, { PATH: context.env.PATH ?? process.env.PATH });
  }
  const kubeConfig = await buildKubeConfig(config);
  const client = new KubeClient(kubeConfig, { chunkSize: options.chunkSize ?? config.drainDefaults.chunkSize });
  return { config, kubeConfig, client };
}

/** ` (as system:serviceaccount:drainbridge:drainbridge)` when the server said who. */
function asWhom(report: PreflightReport): string {
  return report.user ? ` (as ${report.user})` : '';
}

/** Each fix on its line; an install command says who runs it and from where. */
export function fixLines(fixes: readonly string[]): string[] {
  return fixes.map((fix) =>
    fix.startsWith('kubectl apply') ? `  ${fix}   # as a cluster admin, from a drainbridge checkout` : `  ${fix}`,
  );
}

/** The report's failures and their fixes, for stderr (`header` says who is speaking). */
export function explainNotReady(report: PreflightReport, header: string): string[] {
  const missing = report.results.filter((r) => !r.ok);
  const fixes = [...new Set(missing.flatMap((r) => (r.fix ? [r.fix] : [])))];
  return [
    `${header}: the cluster at ${report.server}${asWhom(report)} is not ready for drainbridge; nothing was changed:`,
    ...missing.map((r) => `  - ${r.what}`),
    ...(fixes.length > 0 ? ['To fix it:', ...fixLines(fixes)] : []),
    "Then 'drainbridge check' shows what is left.",
  ];
}

/** The whole report, for `drainbridge check` (stdout). */
export function describeReport(report: PreflightReport): string[] {
  return [
    `Kubernetes API server ${report.server}${asWhom(report)}`,
    ...report.results.map((r) => `  ${r.ok ? 'ok     ' : 'MISSING'}  ${r.what}`),
  ];
}

/** Runs the preflight; when something is missing, says what and how to install it, and returns false. */
export async function preflight(
  cluster: Cluster,
  needs: PreflightNeeds,
  context: CommandContext,
  header: string,
): Promise<boolean> {
  const report = await runPreflight({ ...cluster, env: context.env }, needs);
  if (report.ready) return true;
  for (const line of explainNotReady(report, header)) context.err(line);
  return false;
}

/** A command on one node, connected: its command line, the NODE it names, and the cluster. */
export interface NodeCommand {
  readonly parsed: ParsedCommandLine;
  readonly node: string;
  readonly cluster: Cluster;
}

/**
 * How `drainbridge abort|repair|restore NODE` start: the command line parsed against `flags`, the one NODE
 * operand, the cluster connected and the preflight for `operation` passed. Undefined when the cluster is
 * not ready (said on stderr under `drainbridge <operation>`): exit `notReady`.
 */
export async function connectForNode(
  argv: readonly string[],
  flags: readonly FlagSpec[],
  context: CommandContext,
  operation: Extract<Operation, 'abort' | 'repair' | 'restore'>,
): Promise<NodeCommand | undefined> {
  const parsed = parseCommandLine(argv, flags);
  const [node = ''] = expectPositionals(parsed, ['NODE']);
  const cluster = await connect(parsed, context);
  if (!(await preflight(cluster, { operation }, context, `drainbridge ${operation}`))) return undefined;
  return { parsed, node, cluster };
}
