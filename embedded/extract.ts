/**
 * Reads the CloudFormation template `serverless package` generates and extracts what the embedded
 * mode runs: the state machine definitions (task ARNs replaced by local function names), the bus rules
 * that start them and the schedules. Pure: template in, definitions out.
 */

/** A Lambda ARN as the embedded executor sees it; the function name is the serverless.yml key. */
export const LOCAL_ARN_PREFIX = 'arn:aws:lambda:local:000000000000:function:';
/** A state machine's ARN as the embedded executor sees it; the name is the serverless.yml key. */
export const LOCAL_STATE_MACHINE_ARN_PREFIX = 'arn:aws:states:local:000000000000:stateMachine:';
/** The embedded bus's name; every reference to the template's bus resolves to it. */
export const EMBEDDED_BUS = 'drainbridge';

type Json = unknown;
interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, Json>;
}
interface Template {
  readonly Resources: Record<string, Resource>;
}

export interface ExtractedRule {
  readonly name: string;
  readonly eventBusName: string;
  readonly state: string;
  readonly eventPattern: Json;
  readonly target: {
    readonly stateMachine: string;
    readonly input?: string;
    readonly inputPath?: string;
    readonly inputTransformer?: Json;
  };
}

export interface ExtractedSchedule {
  readonly name: string;
  readonly scheduleExpression: string;
  readonly state: string;
  readonly target: { readonly stateMachine: string; readonly input?: string };
}

export interface Definitions {
  readonly stateMachines: Record<string, Json>;
  readonly rules: readonly ExtractedRule[];
  readonly schedules: readonly ExtractedSchedule[];
}

function resourcesOfType(template: Template, type: string): [string, Record<string, Json>][] {
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === type)
    .map(([id, resource]) => [id, resource.Properties ?? {}]);
}

/** Function logical id → serverless.yml key, from `FunctionName: <service>-<stage>-<key>`. */
function functionKeys(template: Template): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [id, props] of resourcesOfType(template, 'AWS::Lambda::Function')) {
    const name = String(props.FunctionName ?? '');
    keys.set(id, name.slice(name.lastIndexOf('-') + 1));
  }
  return keys;
}

/** State machine logical id → serverless.yml key, from `StateMachineName: drainbridge-<key>-<stage>`. */
function machineKeys(template: Template): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [id, props] of resourcesOfType(template, 'AWS::StepFunctions::StateMachine')) {
    const parts = String(props.StateMachineName ?? id).split('-');
    keys.set(id, parts.length >= 3 ? parts.slice(1, -1).join('-') : id);
  }
  return keys;
}

/**
 * A state machine's own ARN written out in its definition (ContinueAsNew starts the machine again):
 * `arn:${AWS::Partition}:states:…:stateMachine:drainbridge-<key>-<stage>` → the local ARN of `<key>`.
 */
function stateMachineArnOf(value: unknown): string | undefined {
  const sub = (value as { 'Fn::Sub'?: unknown } | undefined)?.['Fn::Sub'];
  const match = typeof sub === 'string' ? /:stateMachine:[^-]+-(.+)-[^-]+$/.exec(sub) : null;
  return match?.[1] ? `${LOCAL_STATE_MACHINE_ARN_PREFIX}${match[1]}` : undefined;
}

function substitute(text: string, variables: Record<string, Json>, functions: Map<string, string>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    const value = variables[name] as { 'Fn::GetAtt'?: [string, string] } | undefined;
    const target = value?.['Fn::GetAtt']?.[0];
    const key = target ? functions.get(target) : undefined;
    if (key) return `${LOCAL_ARN_PREFIX}${key}`;
    const machine = stateMachineArnOf(value);
    if (!machine) throw new Error(`cannot resolve ${whole} in a state machine definition`);
    return machine;
  });
}

function definitionOf(props: Record<string, Json>, functions: Map<string, string>): Json {
  const definition = props.DefinitionString as { 'Fn::Sub'?: [string, Record<string, Json>] } | string;
  if (typeof definition === 'string') return JSON.parse(definition);
  const [text, variables] = definition['Fn::Sub'] ?? ['', {}];
  return JSON.parse(substitute(text, variables, functions));
}

function targetMachine(props: Record<string, Json>, machines: Map<string, string>) {
  const targets =
    (props.Targets as { Arn?: { Ref?: string }; Input?: string; InputPath?: string; InputTransformer?: Json }[]) ?? [];
  const target = targets.find((t) => t.Arn?.Ref !== undefined && machines.has(t.Arn.Ref));
  if (!target?.Arn?.Ref) return undefined;
  return {
    stateMachine: machines.get(target.Arn.Ref) as string,
    ...(target.Input !== undefined ? { input: target.Input } : {}),
    ...(target.InputPath !== undefined ? { inputPath: target.InputPath } : {}),
    ...(target.InputTransformer !== undefined ? { inputTransformer: target.InputTransformer } : {}),
  };
}

/** Extracts the definitions from a packaged template. Rules that start no state machine (notifications) are left out. */
export function extractDefinitions(template: Template): Definitions {
  const functions = functionKeys(template);
  const machines = machineKeys(template);
  const stateMachines: Record<string, Json> = {};
  for (const [id, props] of resourcesOfType(template, 'AWS::StepFunctions::StateMachine')) {
    stateMachines[machines.get(id) ?? id] = definitionOf(props, functions);
  }
  const rules: ExtractedRule[] = [];
  const schedules: ExtractedSchedule[] = [];
  for (const [id, props] of resourcesOfType(template, 'AWS::Events::Rule')) {
    const target = targetMachine(props, machines);
    if (!target) continue;
    const state = String(props.State ?? 'ENABLED');
    if (typeof props.ScheduleExpression === 'string') {
      schedules.push({ name: String(props.Name ?? id), scheduleExpression: props.ScheduleExpression, state, target });
    } else {
      rules.push({ name: id, eventBusName: EMBEDDED_BUS, state, eventPattern: props.EventPattern, target });
    }
  }
  return { stateMachines, rules, schedules };
}
