/**
 * Rule definitions (as `state-machines/definitions.json` holds them, extracted from the packaged
 * template) compiled for the in-process bus: pattern validated, target input compiled, and the
 * question "is this rule on my bus?" answered once.
 */
import { type FieldProblem, InvalidInput } from '../errors/index.ts';
import type { BusEnvelope } from './envelope.ts';
import { compilePattern, type EventPattern } from './event-pattern.ts';
import { compileTargetInput, type InputRenderer, type TargetInputConfig } from './input.ts';

/** A rule as `definitions.json` holds it. */
export interface BusRuleDefinition {
  /** The rule's name (the template's logical id). */
  readonly name: string;
  /**
   * The bus's name or ARN, or a CloudFormation reference to it (`{ "Ref": "Bus" }`,
   * `{ "Fn::GetAtt": ["Bus", "Name"] }`, compared by logical id with `busAliases`); absent means `default`.
   */
  readonly eventBusName?: string | Readonly<Record<string, unknown>>;
  /** `ENABLED` (the default) or `DISABLED`. */
  readonly state?: string;
  readonly eventPattern: unknown;
  readonly target: TargetInputConfig & { readonly stateMachine: string };
}

/** A rule ready to match and deliver. */
export interface CompiledRule {
  readonly name: string;
  readonly arn: string;
  readonly stateMachine: string;
  readonly pattern: EventPattern;
  readonly renderInput: InputRenderer;
  matches(event: BusEnvelope): boolean;
}

/** The bus a rule set is compiled for. */
export interface BusIdentity {
  readonly busName: string;
  /** Other spellings of the same bus in the definitions, e.g. its CloudFormation logical id. */
  readonly busAliases?: readonly string[];
  readonly region: string;
  readonly account: string;
}

/** The name (or logical id) a rule's `eventBusName` gives: a string, `Ref` or `Fn::GetAtt`; undefined if neither. */
export function busReferenceName(eventBusName: unknown): string | undefined {
  if (eventBusName === undefined) return 'default';
  if (typeof eventBusName === 'string') return eventBusName;
  if (typeof eventBusName !== 'object' || eventBusName === null) return undefined;
  const { Ref: ref, 'Fn::GetAtt': getAtt } = eventBusName as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof ref === 'string') return ref;
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}

/** Whether `eventBusName` (name, ARN, reference or alias; absent = `default`) denotes the bus `bus`. */
export function isSameBus(eventBusName: unknown, bus: Pick<BusIdentity, 'busName' | 'busAliases'>): boolean {
  const name = busReferenceName(eventBusName);
  if (name === undefined) return false;
  return name === bus.busName || name.endsWith(`:event-bus/${bus.busName}`) || (bus.busAliases ?? []).includes(name);
}

function prefixed(error: unknown, prefix: string, what: string): never {
  if (!(error instanceof InvalidInput)) throw error;
  const problems: FieldProblem[] = error.problems.map((p) => ({
    path: p.path ? `${prefix}.${p.path}` : prefix,
    message: p.message,
  }));
  throw new InvalidInput(what, problems);
}

function compileOne(rule: BusRuleDefinition, index: number, bus: BusIdentity): CompiledRule {
  const what = `invalid rule ${JSON.stringify(rule?.name ?? index)}`;
  const base = `rules[${index}]`;
  if (typeof rule?.name !== 'string' || rule.name === '')
    throw new InvalidInput(what, [{ path: `${base}.name`, message: 'must be a non-empty string' }]);
  if (typeof rule.target?.stateMachine !== 'string' || rule.target.stateMachine === '') {
    throw new InvalidInput(what, [{ path: `${base}.target.stateMachine`, message: 'must name a state machine' }]);
  }
  if (busReferenceName(rule.eventBusName) === undefined) {
    throw new InvalidInput(what, [
      { path: `${base}.eventBusName`, message: 'must be a bus name, an ARN, { "Ref": … } or { "Fn::GetAtt": [ … ] }' },
    ]);
  }
  let pattern: EventPattern;
  let renderInput: InputRenderer;
  try {
    pattern = compilePattern(rule.eventPattern);
  } catch (error) {
    prefixed(error, `${base}.eventPattern`, what);
  }
  try {
    renderInput = compileTargetInput(rule.target);
  } catch (error) {
    prefixed(error, `${base}.target`, what);
  }
  const busPart = bus.busName === 'default' ? '' : `${bus.busName}/`;
  return {
    name: rule.name,
    arn: `arn:aws:events:${bus.region}:${bus.account}:rule/${busPart}${rule.name}`,
    stateMachine: rule.target.stateMachine,
    pattern,
    renderInput,
    matches: (event) => pattern.matches(event),
  };
}

/** Compiles the ENABLED rules on `bus`; every rule is validated, whatever its bus or state. */
export function compileRules(rules: readonly BusRuleDefinition[], bus: BusIdentity): CompiledRule[] {
  const compiled = rules.map((rule, index) => ({ rule, compiled: compileOne(rule, index, bus) }));
  return compiled
    .filter(({ rule }) => (rule.state ?? 'ENABLED') === 'ENABLED' && isSameBus(rule.eventBusName, bus))
    .map(({ compiled: rule }) => rule);
}
