/**
 * Bad input for every Lambda function, each case breaking one thing of a valid sample (events/*.json)
 * and naming what the refusal must name. Shape errors are refused by the function's schema at the edge;
 * the `semantic` cases are well-formed but impossible (a node that does not exist, a request that holds
 * nothing, a deadline already passed) and are refused by the domain — with nothing written either way.
 */
import { readFileSync } from 'node:fs';

const EVENTS = new URL('../../../events/', import.meta.url);

/** The functions of serverless.yml, by their file in functions/. */
export const FUNCTIONS = [
  'resolve-target',
  'admit',
  'await-slot',
  'prepare-branches',
  'pass',
  'finish-evacuation',
  'fail-evacuation',
  'release-hold',
  'restore-branches',
  'finish-restore',
  'normalize-aws-notice',
  'plan-start',
  'open-window',
] as const;
export type FunctionFile = (typeof FUNCTIONS)[number];

export interface BadInputCase {
  readonly fn: FunctionFile;
  readonly what: string;
  readonly event: unknown;
  /** What the refusal must name (a field path, a value, the node). */
  readonly names: readonly (string | RegExp)[];
  /** The error's name (InvalidInput for shape errors); for the normaliser, undefined: it answers `skipped`. */
  readonly error?: string;
}

type Json = Record<string, unknown>;

function sample(name: string): Json {
  return JSON.parse(readFileSync(new URL(name, EVENTS), 'utf8')) as Json;
}

/** A deep copy of `base` with `change` applied. */
function broken(base: Json, change: (event: Json) => void): Json {
  const event = structuredClone(base);
  change(event);
  return event;
}

const obj = (value: unknown) => value as Json;

// ---- ResolveTarget: the execution's input, checked against the bus contracts ---------------------------

const RESOLVE = sample('resolve-target.json');
const detailOf = (event: Json) => obj(obj(event.input).detail);
const withDetail = (change: (detail: Json) => void) => broken(RESOLVE, (e) => change(detailOf(e)));

const resolveCases: BadInputCase[] = [
  {
    what: 'an unknown machine',
    event: broken(RESOLVE, (e) => {
      e.machine = 'drain';
    }),
    names: ['machine'],
  },
  { what: 'no machine', event: broken(RESOLVE, (e) => void delete e.machine), names: ['machine'] },
  {
    what: 'an empty executionId',
    event: broken(RESOLVE, (e) => {
      e.executionId = '';
    }),
    names: ['executionId'],
  },
  {
    what: 'an executionId of 3,000 characters',
    event: broken(RESOLVE, (e) => {
      e.executionId = 'x'.repeat(3000);
    }),
    names: ['executionId'],
  },
  { what: 'no startedAt', event: broken(RESOLVE, (e) => void delete e.startedAt), names: ['startedAt'] },
  {
    what: 'an unknown top-level field',
    event: broken(RESOLVE, (e) => {
      e.priority = 1;
    }),
    names: ['priority'],
  },
  {
    what: 'an input that is a string',
    event: broken(RESOLVE, (e) => {
      e.input = 'evacuate node-1';
    }),
    names: ['detail-type'],
  },
  {
    what: 'an input that is null',
    event: broken(RESOLVE, (e) => {
      e.input = null;
    }),
    names: ['detail-type'],
  },
  {
    what: 'no detail-type',
    event: broken(RESOLVE, (e) => void delete obj(e.input)['detail-type']),
    names: ['detail-type', 'Maintenance Requested'],
  },
  {
    what: 'an unknown detail-type',
    event: broken(RESOLVE, (e) => {
      obj(e.input)['detail-type'] = 'Node Drained';
    }),
    names: ['detail-type', 'Node Drained'],
  },
  {
    what: 'a restore event given to Evacuate',
    event: broken(RESOLVE, (e) => {
      obj(e.input)['detail-type'] = 'Maintenance Ended';
    }),
    names: ['detail-type', 'Maintenance Ended'],
  },
  {
    what: 'a source that is not drainbridge.requests',
    event: broken(RESOLVE, (e) => {
      obj(e.input).source = 'drainbridge.other';
    }),
    names: ['source'],
  },
  { what: 'no detail', event: broken(RESOLVE, (e) => void delete obj(e.input).detail), names: ['detail'] },
  {
    what: 'version 2',
    event: withDetail((d) => {
      d.version = '2';
    }),
    names: ['version', '2'],
  },
  { what: 'no requestId', event: withDetail((d) => void delete d.requestId), names: ['requestId'] },
  {
    what: 'a requestId with spaces',
    event: withDetail((d) => {
      d.requestId = 'my request';
    }),
    names: ['requestId'],
  },
  {
    what: 'a requestId of 200 characters',
    event: withDetail((d) => {
      d.requestId = 'r'.repeat(200);
    }),
    names: ['requestId'],
  },
  {
    what: 'an empty requester',
    event: withDetail((d) => {
      d.requester = '';
    }),
    names: ['requester'],
  },
  {
    what: 'a requester of 300 characters',
    event: withDetail((d) => {
      d.requester = 'a'.repeat(300);
    }),
    names: ['requester'],
  },
  {
    what: 'an unknown origin',
    event: withDetail((d) => {
      d.origin = 'cron';
    }),
    names: ['origin'],
  },
  {
    what: 'a target naming nothing',
    event: withDetail((d) => {
      d.target = {};
    }),
    names: ['target', 'none given'],
  },
  {
    what: 'a target naming a node and a providerID',
    event: withDetail((d) => {
      d.target = { nodeName: 'node-1', providerID: 'aws:///eu-west-1a/i-1' };
    }),
    names: ['target', 'nodeName and providerID'],
  },
  {
    what: 'a node name the API server would refuse',
    event: withDetail((d) => {
      d.target = { nodeName: 'Node_1!' };
    }),
    names: ['target.nodeName'],
  },
  {
    what: 'a node name of 300 characters',
    event: withDetail((d) => {
      d.target = { nodeName: 'n'.repeat(300) };
    }),
    names: ['target.nodeName', '253'],
  },
  {
    what: 'a providerID without a scheme',
    event: withDetail((d) => {
      d.target = { providerID: 'i-0abc' };
    }),
    names: ['target.providerID'],
  },
  {
    what: 'an instance of an unknown provider',
    event: withDetail((d) => {
      d.target = { instance: { provider: 'ibm', id: 'x' } };
    }),
    names: ['target.instance.provider'],
  },
  {
    what: 'an instance id with spaces',
    event: withDetail((d) => {
      d.target = { instance: { provider: 'aws', id: 'i 1' } };
    }),
    names: ['target.instance.id'],
  },
  {
    what: 'a reason of 2,000 characters',
    event: withDetail((d) => {
      d.reason = 'x'.repeat(2000);
    }),
    names: ['reason', '1024'],
  },
  {
    what: 'a deadline in words',
    event: withDetail((d) => {
      d.deadline = 'tomorrow';
    }),
    names: ['deadline'],
  },
  {
    what: 'a notBefore in month 13',
    event: withDetail((d) => {
      d.notBefore = '2026-13-01T00:00:00Z';
    }),
    names: ['notBefore'],
  },
  {
    what: 'a deadline before notBefore',
    event: withDetail((d) => {
      d.notBefore = '2026-11-21T12:00:00Z';
      d.deadline = '2026-11-21T11:00:00Z';
    }),
    names: ['deadline', 'later than notBefore'],
  },
  {
    what: 'a deadline without a time zone',
    event: withDetail((d) => {
      d.deadline = '2026-11-21T12:00:00';
    }),
    names: ['deadline'],
  },
  {
    what: 'a grace period as a string',
    event: withDetail((d) => {
      d.drain = { gracePeriodSeconds: '30' };
    }),
    names: ['drain.gracePeriodSeconds'],
  },
  {
    what: 'a grace period of -5',
    event: withDetail((d) => {
      d.drain = { gracePeriodSeconds: -5 };
    }),
    names: ['drain.gracePeriodSeconds'],
  },
  {
    what: 'a grace period of 1.5',
    event: withDetail((d) => {
      d.drain = { gracePeriodSeconds: 1.5 };
    }),
    names: ['drain.gracePeriodSeconds'],
  },
  {
    what: 'a timeout of a billion seconds',
    event: withDetail((d) => {
      d.drain = { timeoutSeconds: 1e9 };
    }),
    names: ['drain.timeoutSeconds'],
  },
  {
    what: 'a chunk size of 0',
    event: withDetail((d) => {
      d.drain = { chunkSize: 0 };
    }),
    names: ['drain.chunkSize'],
  },
  {
    what: '"yes" for force',
    event: withDetail((d) => {
      d.drain = { force: 'yes' };
    }),
    names: ['drain.force'],
  },
  {
    what: 'an unknown drain flag',
    event: withDetail((d) => {
      d.drain = { dryRun: true };
    }),
    names: ['drain', 'dryRun'],
  },
  {
    what: 'an unknown field in the request',
    event: withDetail((d) => {
      d.priority = 'high';
    }),
    names: ['priority'],
  },
  {
    what: 'a notice from an unknown provider',
    event: withDetail((d) => {
      d.notice = {
        provider: 'oracle',
        source: 'aws-health',
        eventId: 'e',
        eventType: 't',
        action: 'evacuate',
      };
    }),
    names: ['notice.provider'],
  },
  {
    what: 'a Node Cordoned event without its requestId',
    event: broken(RESOLVE, (e) => {
      obj(e.input)['detail-type'] = 'Node Cordoned';
      obj(e.input).source = 'drainbridge.cluster';
      e.input = {
        'detail-type': 'Node Cordoned',
        detail: { version: '1', requester: 'kubectl', target: { nodeName: 'node-1' } },
      };
    }),
    names: ['requestId'],
  },
].map((c) => ({ fn: 'resolve-target' as const, error: 'InvalidInput', ...c }));

const semanticResolve: BadInputCase[] = [
  {
    fn: 'resolve-target',
    what: 'a node that does not exist',
    event: withDetail((d) => {
      d.target = { nodeName: 'node-404' };
    }),
    names: ['node-404'],
    error: 'TargetNotFound',
  },
  {
    fn: 'resolve-target',
    what: 'a providerID no node has',
    event: withDetail((d) => {
      d.target = { providerID: 'aws:///eu-west-1a/i-0000000000000dead' };
    }),
    names: ['i-0000000000000dead'],
    error: 'TargetNotFound',
  },
];

// ---- the steps after ResolveTarget: the document the state machine passes on ---------------------------

const TASK_SAMPLES: Record<Exclude<FunctionFile, 'resolve-target' | 'normalize-aws-notice' | 'open-window'>, string> = {
  admit: 'admit.json',
  'await-slot': 'await-slot.json',
  'prepare-branches': 'prepare-branches.json',
  pass: 'pass-pods.json',
  'finish-evacuation': 'finish-evacuation.json',
  'fail-evacuation': 'fail-evacuation.json',
  'release-hold': 'release-hold.json',
  'restore-branches': 'restore-branches.json',
  'finish-restore': 'finish-restore.json',
  'plan-start': 'plan-start.json',
};

const requestOf = (event: Json) => obj(event.request);

/** The breakages every step's input is checked for. */
const COMMON: { what: string; change: (event: Json) => unknown; names: (string | RegExp)[] }[] = [
  { what: 'no request', change: (e) => delete e.request, names: ['request'] },
  {
    what: 'a node name the API server would refuse',
    change: (e) => {
      requestOf(e).nodeName = 'NODE 1';
    },
    names: ['request.nodeName'],
  },
  {
    what: 'drain options missing a field',
    change: (e) => delete obj(requestOf(e).drain).chunkSize,
    names: ['request.drain.chunkSize'],
  },
  { what: 'no executionId', change: (e) => delete e.executionId, names: ['executionId'] },
  {
    what: 'an empty startedAt',
    change: (e) => {
      e.startedAt = '';
    },
    names: ['startedAt'],
  },
  {
    what: 'an unknown field',
    change: (e) => {
      e.retries = 3;
    },
    names: ['retries'],
  },
  {
    what: 'an empty requestId',
    change: (e) => {
      requestOf(e).requestId = '';
    },
    names: ['request.requestId'],
  },
  {
    what: 'an origin that is not one',
    change: (e) => {
      requestOf(e).origin = 'pager';
    },
    names: ['request.origin'],
  },
];

const taskCases: BadInputCase[] = Object.entries(TASK_SAMPLES).flatMap(([fn, file]) =>
  COMMON.map((c) => ({
    fn: fn as FunctionFile,
    what: c.what,
    event: broken(sample(file), (e) => void c.change(e)),
    names: c.names,
    error: 'InvalidInput',
  })),
);

const notJson: BadInputCase[] = (['admit', 'pass', 'release-hold', 'finish-restore'] as const).flatMap((fn) => [
  {
    fn,
    what: 'an array instead of the task document',
    event: [sample(TASK_SAMPLES[fn])],
    names: ['must be a JSON object (got an array)'],
    error: 'InvalidInput',
  },
  {
    fn,
    what: 'a string instead of the task document',
    event: 'node-1',
    names: ['must be a JSON object (got a string)'],
    error: 'InvalidInput',
  },
]);

const PASS = sample('pass-pods.json');
const AWAIT_SLOT = sample('await-slot.json');
const FAIL = sample('fail-evacuation.json');
const FINISH = sample('finish-restore.json');

const specificCases: BadInputCase[] = [
  {
    fn: 'await-slot',
    what: 'no task token',
    event: broken(AWAIT_SLOT, (e) => void delete e.taskToken),
    names: ['taskToken'],
    error: 'InvalidInput',
  },
  {
    fn: 'await-slot',
    what: 'a task token of 3,000 characters (Step Functions: at most 2,048)',
    event: broken(AWAIT_SLOT, (e) => {
      e.taskToken = 't'.repeat(3000);
    }),
    names: ['taskToken'],
    error: 'InvalidInput',
  },
  {
    fn: 'pass',
    what: 'an unknown branch',
    event: broken(PASS, (e) => {
      e.branch = 'vms';
    }),
    names: ['branch'],
    error: 'InvalidInput',
  },
  {
    fn: 'pass',
    what: 'no branch',
    event: broken(PASS, (e) => void delete e.branch),
    names: ['branch'],
    error: 'InvalidInput',
  },
  {
    fn: 'fail-evacuation',
    what: 'no caught error',
    event: broken(FAIL, (e) => void delete e.error),
    names: ['error'],
    error: 'InvalidInput',
  },
  {
    fn: 'fail-evacuation',
    what: 'a caught error that is a string',
    event: broken(FAIL, (e) => {
      e.error = 'it broke';
    }),
    names: ['error'],
    error: 'InvalidInput',
  },
  {
    fn: 'finish-restore',
    what: 'a release result that is not a boolean',
    event: broken(FINISH, (e) => {
      obj(e.release).lastHold = 'yes';
    }),
    names: ['release.lastHold'],
    error: 'InvalidInput',
  },
  {
    fn: 'finish-restore',
    what: 'no branches result',
    event: broken(FINISH, (e) => void delete e.branches),
    names: ['branches'],
    error: 'InvalidInput',
  },
  {
    fn: 'finish-restore',
    what: 'leftAlone that is not a list',
    event: broken(FINISH, (e) => {
      obj(e.branches).leftAlone = 'compute-1';
    }),
    names: ['branches.leftAlone'],
    error: 'InvalidInput',
  },
];

/** Well-formed but impossible: refused by the domain after reading the cluster, with nothing written. */
const NOW = new Date();
const live = (file: string, change: (event: Json) => void = () => {}) =>
  broken(sample(file), (e) => {
    e.startedAt = NOW.toISOString();
    delete requestOf(e).deadline;
    change(e);
  });

const semanticTasks: BadInputCase[] = [
  {
    fn: 'admit',
    what: 'a node that does not exist',
    event: live('admit.json', (e) => {
      requestOf(e).nodeName = 'node-404';
      requestOf(e).target = { nodeName: 'node-404' };
    }),
    names: ['node-404'],
    error: 'EvacuationFailed',
  },
  {
    fn: 'admit',
    what: 'a deadline that has passed',
    event: live('admit.json', (e) => {
      requestOf(e).deadline = '2020-01-01T00:00:00Z';
    }),
    names: ['deadline 2020-01-01T00:00:00Z', 'node-1'],
    error: 'DeadlineExceeded',
  },
  {
    fn: 'prepare-branches',
    what: 'a request that holds no node',
    event: live('prepare-branches.json'),
    names: ['no longer holds node node-1'],
    error: 'EvacuationCancelled',
  },
  {
    fn: 'pass',
    what: 'a request that holds no node',
    event: live('pass-pods.json'),
    names: ['no longer holds node node-1'],
    error: 'EvacuationCancelled',
  },
];

// ---- the AWS notice normaliser: events from the default bus --------------------------------------------

const HEALTH = sample('normalize-aws-notice-health.json');
const healthDetail = (change: (detail: Json) => void) => broken(HEALTH, (e) => change(obj(e.detail)));

const normaliserCases: BadInputCase[] = [
  { what: 'no source', event: broken(HEALTH, (e) => void delete e.source), names: ['source'], error: 'InvalidInput' },
  {
    what: 'no detail-type',
    event: broken(HEALTH, (e) => void delete e['detail-type']),
    names: ['detail-type'],
    error: 'InvalidInput',
  },
  {
    what: 'a detail that is a string',
    event: broken(HEALTH, (e) => {
      e.detail = 'x';
    }),
    names: ['detail'],
    error: 'InvalidInput',
  },
  {
    what: 'an eventArn that is not one',
    event: healthDetail((d) => {
      d.eventArn = 'health-1';
    }),
    names: ['eventArn'],
  },
  {
    what: 'an unknown event type',
    event: healthDetail((d) => {
      d.eventTypeCode = 'AWS_EC2_DANCE';
    }),
    names: ['eventTypeCode'],
  },
  {
    what: 'a start time in words',
    event: healthDetail((d) => {
      d.startTime = 'soon';
    }),
    names: ['startTime'],
  },
  {
    what: 'an unknown status',
    event: healthDetail((d) => {
      d.statusCode = 'maybe';
    }),
    names: ['statusCode'],
  },
  {
    what: 'affected entities that are not a list',
    event: healthDetail((d) => {
      d.affectedEntities = 'i-1';
    }),
    names: ['affectedEntities'],
  },
  {
    what: 'another service',
    event: healthDetail((d) => {
      d.service = 'RDS';
    }),
    names: ['service'],
  },
].map((c) => ({ fn: 'normalize-aws-notice' as const, ...c }));

// ---- OpenWindow: a maintenance window's schedule fired (EventBridge Scheduler's input) ----------------

const WINDOW = sample('open-window.json');
const withWindow = (change: (window: Json) => void) => broken(WINDOW, (e) => change(obj(e.window)));

const windowCases: BadInputCase[] = [
  { what: 'no window', event: broken(WINDOW, (e) => delete e.window), names: ['window'] },
  {
    what: 'a window that is a string',
    event: broken(WINDOW, (e) => {
      e.window = 'weekly';
    }),
    names: ['window'],
  },
  {
    what: 'a window name that is not a name',
    event: withWindow((w) => {
      w.name = 'Weekly Window!';
    }),
    names: ['window.name'],
  },
  {
    what: 'a schedule that is not a cron expression',
    event: withWindow((w) => {
      w.schedule = 'every sunday';
    }),
    names: ['window.schedule'],
  },
  {
    what: 'a time zone that does not exist',
    event: withWindow((w) => {
      w.timezone = 'Mars/Olympus';
    }),
    names: ['window.', 'Mars/Olympus'],
  },
  {
    what: 'a duration of 0 minutes',
    event: withWindow((w) => {
      w.durationMinutes = 0;
    }),
    names: ['window.durationMinutes'],
  },
  {
    what: 'a duration that is a string',
    event: withWindow((w) => {
      w.durationMinutes = '4h';
    }),
    names: ['window.durationMinutes'],
  },
  {
    what: 'maxNodes 0',
    event: withWindow((w) => {
      w.maxNodes = 0;
    }),
    names: ['window.maxNodes'],
  },
  {
    what: 'an endsOn that is not one',
    event: withWindow((w) => {
      w.endsOn = 'never';
    }),
    names: ['window.endsOn'],
  },
  {
    what: 'an unknown field in the window',
    event: withWindow((w) => {
      w.priority = 1;
    }),
    names: ['priority'],
  },
  { what: 'no scheduledTime', event: broken(WINDOW, (e) => delete e.scheduledTime), names: ['scheduledTime'] },
  {
    what: 'a scheduledTime that is not a time',
    event: broken(WINDOW, (e) => {
      e.scheduledTime = 'sunday 2am';
    }),
    names: ['scheduledTime'],
  },
  {
    what: 'an unknown top-level field',
    event: broken(WINDOW, (e) => {
      e.nodes = ['node-1'];
    }),
    names: ['nodes'],
  },
  { what: 'an array instead of the input', event: [WINDOW], names: ['must be a JSON object (got an array)'] },
].map((c) => ({ fn: 'open-window' as const, error: 'InvalidInput', ...c }));

export const CASES: readonly BadInputCase[] = [
  ...resolveCases,
  ...semanticResolve,
  ...taskCases,
  ...notJson,
  ...specificCases,
  ...semanticTasks,
  ...normaliserCases,
  ...windowCases,
];
