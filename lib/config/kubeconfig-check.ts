/**
 * A kubeconfig file a person hands drainbridge, checked before any connection: it is a kubeconfig, its
 * current (or chosen) context exists and names a cluster with an http(s) server and a user that exist,
 * and every file it points to (CA, client certificate and key, token file) and the exec plugin it runs
 * are there. The client library would otherwise fail later with "No active cluster!", an anonymous
 * request, or an errno code. Each problem names the file and what in it is wrong.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import { yamlErrorLine } from '../util/yaml-error-line.ts';

type Named<T> = { name?: unknown } & T;
interface Kubeconfig {
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: unknown; user?: unknown } }>[];
  'current-context'?: unknown;
}

const READ_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
};

function unreadable(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && READ_ERRORS[code]) || 'it cannot be read';
}

function readText(path: string): string {
  try {
    if (statSync(path).isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([{ path: 'KUBECONFIG', message: `cannot read kubeconfig ${path}: ${unreadable(error)}` }]);
  }
}

function parseKubeconfig(path: string, text: string): Kubeconfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new ConfigError([{ path: 'KUBECONFIG', message: `${path} is not valid YAML${yamlErrorLine(error)}` }]);
  }
  const shape = doc as Kubeconfig | null;
  const isObject = typeof doc === 'object' && doc !== null && !Array.isArray(doc);
  if (!isObject || !(shape?.clusters || shape?.contexts || shape?.users)) {
    throw new ConfigError([
      { path: 'KUBECONFIG', message: `${path} is not a kubeconfig (it has no clusters, contexts or users)` },
    ]);
  }
  return shape as Kubeconfig;
}

function names(list: readonly Named<unknown>[] | undefined): string[] {
  return (list ?? []).map((entry) => String(entry.name));
}

function fileProblem(owner: string, key: string, file: unknown): string | undefined {
  if (typeof file !== 'string' || file === '') return undefined;
  try {
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (error) {
    return `${owner}: ${key} ${file} cannot be used (${unreadable(error)})`;
  }
}

/** Whether `command` can be run: a path that exists, or a name found on PATH. */
function onPath(command: string, path: string | undefined): boolean {
  const runnable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return runnable(isAbsolute(command) ? command : join(process.cwd(), command));
  return (path ?? '').split(delimiter).some((dir) => dir !== '' && runnable(join(dir, command)));
}

function clusterProblems(file: string, doc: Kubeconfig, clusterName: string): string[] {
  const entry = doc.clusters?.find((c) => c.name === clusterName);
  if (!entry) return [`the context names cluster "${clusterName}", which ${file} does not define`];
  const cluster = entry.cluster ?? {};
  const owner = `cluster "${clusterName}"`;
  const server = cluster.server;
  if (typeof server !== 'string' || server === '') return [`${owner} has no server`];
  if (!/^https?:\/\/[^\s/]+/.test(server)) return [`${owner}: server "${server}" is not an https:// URL`];
  const ca = fileProblem(owner, 'certificate-authority', cluster['certificate-authority']);
  return ca ? [ca] : [];
}

function userProblems(
  file: string,
  doc: Kubeconfig,
  userName: string,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const entry = doc.users?.find((u) => u.name === userName);
  if (!entry) return [`the context names user "${userName}", which ${file} does not define`];
  const user = entry.user ?? {};
  const owner = `user "${userName}"`;
  const problems = ['client-certificate', 'client-key', 'tokenFile']
    .map((key) => fileProblem(owner, key, user[key]))
    .filter((p): p is string => p !== undefined);
  const command = (user.exec as { command?: unknown } | undefined)?.command;
  if (typeof command === 'string' && !onPath(command, env.PATH)) {
    problems.push(`${owner}: its credential plugin "${command}" (exec) is not installed or not on PATH`);
  }
  return problems;
}

/** `wanted`: the context asked for by `setting` (`--context`, DRAINBRIDGE_KUBE_CONTEXT), else the file's current one. */
function contextProblems(
  file: string,
  doc: Kubeconfig,
  wanted: { readonly name?: string; readonly setting?: string },
): FieldProblem[] {
  const contexts = names(doc.contexts);
  const current = wanted.name ?? (typeof doc['current-context'] === 'string' ? doc['current-context'] : '');
  if (!current) {
    return [
      {
        path: 'KUBECONFIG',
        message: `${file} names no current-context: pick one with --context (it has: ${contexts.join(', ') || 'none'})`,
      },
    ];
  }
  if (!contexts.includes(current)) {
    // A context asked for by name is that setting's problem; the file's own current-context is the file's.
    const path = wanted.name === undefined ? 'KUBECONFIG' : (wanted.setting ?? 'DRAINBRIDGE_KUBE_CONTEXT');
    return [{ path, message: `context "${current}" is not in ${file} (it has: ${contexts.join(', ') || 'none'})` }];
  }
  return [];
}

/**
 * Checks the kubeconfig at `path` for use with `context` (default: its current-context). Throws a
 * ConfigError listing every problem found (under KUBECONFIG); returns nothing when the file is usable.
 */
export function checkKubeconfigFile(
  path: string,
  context: { readonly name?: string; readonly setting?: string } = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const doc = parseKubeconfig(path, readText(path));
  const contextIssues = contextProblems(path, doc, context);
  if (contextIssues.length > 0) throw new ConfigError(contextIssues);
  const name = context.name ?? String(doc['current-context']);
  const selected = doc.contexts?.find((c) => c.name === name)?.context ?? {};
  const problems: string[] = [];
  if (typeof selected.cluster === 'string') problems.push(...clusterProblems(path, doc, selected.cluster));
  else problems.push(`context "${name}" names no cluster`);
  if (typeof selected.user === 'string') problems.push(...userProblems(path, doc, selected.user, env));
  if (problems.length > 0) {
    throw new ConfigError(problems.map((message): FieldProblem => ({ path: 'KUBECONFIG', message })));
  }
}
