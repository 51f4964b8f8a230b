/**
 * What can be checked offline of a documented AWS command (a `doc-test: aws` block): no account is
 * reachable here, so each command is checked against what it names instead — `serverless deploy` by
 * `serverless print` with the same flags (the configuration resolves for that stage, region and params),
 * the files and kustomize paths it reads exist in the checkout, and the names it derives from the deployed
 * stack (state machines, the Lambda role) are the ones the configuration gives. Pure, except for the
 * caller's `print`.
 */

/** Splits a command line into words as a shell would for these commands: quotes removed, `$VAR` kept. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: '"' | "'" | undefined;
  let started = false;
  for (const char of text.replaceAll('\\\n', ' ')) {
    if (quote) {
      if (char === quote) quote = undefined;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started || word) words.push(word);
      word = '';
      started = false;
    } else word += char;
  }
  if (started || word) words.push(word);
  return words;
}

/** A `$NAME` the block sets from an AWS call, replaced by a stand-in value (print needs no real one). */
function standIn(word: string): string {
  return word.replace(/\$([A-Z_]+)/g, (_, name: string) => `example-${name.toLowerCase()}`);
}

/** The arguments `serverless print` gets for a documented `npx serverless deploy …`, or undefined. */
export function printArgumentsOf(command: string): string[] | undefined {
  const words = shellWords(command);
  const at = words.findIndex((w, i) => w === 'serverless' && words[i + 1] === 'deploy');
  if (at < 0) return undefined;
  return ['print', ...words.slice(at + 2).map(standIn), '--format', 'json'];
}

/** The value of `--name VALUE` or `--name=VALUE` among `words`. */
export function flagOf(words: readonly string[], name: string): string | undefined {
  const at = words.findIndex((w) => w === `--${name}`);
  if (at >= 0) return words[at + 1];
  return words.find((w) => w.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** Paths of the checkout a command reads: `file://events/…`, `kubectl apply -k|-f deploy/…`. */
export function checkoutPathsOf(command: string): string[] {
  const words = shellWords(command);
  const files = words.flatMap((w) => (w.startsWith('file://') ? [w.slice('file://'.length)] : []));
  const isApply = words[0] === 'kubectl' && words.includes('apply');
  const applied = isApply ? words.flatMap((w, i) => (w === '-k' || w === '-f' ? [words[i + 1] ?? ''] : [])) : [];
  // Files a reader writes for themselves (their kubeconfig) are not the checkout's.
  return [...files, ...applied].filter((path) => /^(events|deploy)\//.test(path));
}

/** The state machine names (`…:stateMachine:NAME`) and IAM role names (`--role-name NAME`) a command uses. */
export function deployedNamesOf(command: string): { stateMachines: string[]; roles: string[] } {
  const words = shellWords(command);
  const stateMachines = words.flatMap((w) => {
    const name = /:stateMachine:([A-Za-z0-9_-]+)$/.exec(w)?.[1];
    return name ? [name] : [];
  });
  const role = flagOf(words, 'role-name');
  return { stateMachines, roles: role ? [role] : [] };
}

/** What `serverless print --format json` shows that the checks use. */
export interface PrintedService {
  readonly service: string;
  readonly provider: { readonly stage?: string; readonly region?: string };
  readonly stepFunctions?: { readonly stateMachines?: Record<string, { readonly name?: string }> };
}

/** The names a deployed stage has: its state machines and the Lambda role Serverless creates. */
export function namesOfStage(printed: PrintedService): { stateMachines: string[]; roles: string[] } {
  const { stage, region } = printed.provider;
  const machines = Object.values(printed.stepFunctions?.stateMachines ?? {}).flatMap((m) => (m.name ? [m.name] : []));
  return { stateMachines: machines, roles: [`${printed.service}-${stage}-${region}-lambdaRole`] };
}
