/**
 * AWS without an agent: the normaliser function through its handler entry (the middy shell as
 * deployed), with AWS's documented payloads, against the simulator (instances → nodes by providerID)
 * and the in-process bus built from the packaged rules (what it puts there starts Evacuate / Restore).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { lambdaContext } from '../support/lambda-context.ts';

process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const { InProcessBus, InProcessPublisher } = await import('../../lib/bus/index.ts');
const { handler } = await import('../../functions/normalize-aws-notice.ts');
const { noticeRequestId } = await import('../../lib/sources/clouds/ids.ts');
const { MemoryNoticeMetrics } = await import('../../lib/sources/clouds/metrics.ts');
const { DEFAULT_NOTICE_POLICY } = await import('../../lib/sources/clouds/policy.ts');
const { parseNoticePolicy } = await import('../../lib/sources/clouds/config.ts');
const { AWS_NODES, RecordingPublisher, startAgentCluster } = await import('./harness.ts');
const { fixture } = await import('../unit/sources/fixtures.ts');
type AgentCluster = Awaited<ReturnType<typeof startAgentCluster>>;
type Policy = typeof DEFAULT_NOTICE_POLICY;

const CONTEXT = lambdaContext('drainbridge-dev-normalizeAwsNotice', {
  requestId: '00000000-0000-4000-8000-000000000001',
});

interface Result {
  requested: string[];
  ended: string[];
  notNodes: string[];
  skipped?: string;
}

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster(AWS_NODES);
});
after(async () => {
  await cluster.stop();
});

function invoke(event: unknown, policy: Policy = DEFAULT_NOTICE_POLICY) {
  const publisher = new RecordingPublisher();
  const metrics = new MemoryNoticeMetrics();
  const run = handler.withDeps(
    { kube: cluster.kube, publisher, policy, metrics },
    () => new Date('2023-01-27T02:00:00Z'),
  );
  return { publisher, metrics, result: run(event, CONTEXT) as Promise<Result> };
}

const health = () =>
  structuredClone(fixture<Record<string, Record<string, unknown>>>('aws/health-instance-stop-scheduled.json'));
const ARN =
  'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_STOP_SCHEDULED/AWS_EC2_INSTANCE_STOP_SCHEDULED_ABC123-DEF456';

describe('AWS notice normaliser (Health scheduled changes, Spot warnings)', () => {
  it('an upcoming instance stop → Maintenance Requested for the node with that instance, which the packaged rules send to Evacuate', async () => {
    const definitions = JSON.parse(
      readFileSync(new URL('../../state-machines/definitions.json', import.meta.url), 'utf8'),
    );
    const started: { machine: string; input: { detail: Record<string, unknown> } }[] = [];
    const bus = new InProcessBus({
      rules: definitions.rules,
      busName: 'drainbridge',
      start: async (machine, input) => void started.push({ machine, input: input as never }),
    });
    const run = handler.withDeps(
      {
        kube: cluster.kube,
        publisher: new InProcessPublisher(bus),
        policy: DEFAULT_NOTICE_POLICY,
        metrics: new MemoryNoticeMetrics(),
      },
      () => new Date('2023-01-27T02:00:00Z'),
    );
    const result = (await run(health(), CONTEXT)) as Result;
    await bus.idle();
    const requestId = noticeRequestId('aws-health', 'node-1', ARN);
    assert.deepEqual(result, { requested: [requestId], ended: [], notNodes: [] });
    assert.equal(started.length, 1);
    assert.match(started[0]?.machine ?? '', /evacuate/);
    const detail = started[0]?.input.detail;
    assert.equal(detail?.requestId, requestId);
    assert.equal(detail?.requester, 'aws.health');
    assert.equal(detail?.origin, 'aws');
    assert.deepEqual(detail?.target, { nodeName: 'node-1' });
    assert.equal(detail?.notBefore, '2023-02-11T06:00:00.000Z');
    assert.equal(detail?.deadline, '2023-02-11T10:00:00.000Z');
    assert.equal(detail?.drain, undefined, 'no drain options set: the origin aws decides');
    assert.deepEqual(detail?.notice, {
      provider: 'aws',
      source: 'aws-health',
      eventId: ARN,
      eventType: 'AWS_EC2_INSTANCE_STOP_SCHEDULED',
      action: 'evacuate',
    });
    assert.match(String(detail?.reason), /AWS Health event: AWS_EC2_INSTANCE_STOP_SCHEDULED \(upcoming\)/);
  });

  it('a redelivered event is the same request (a duplicate the workflow drops)', async () => {
    const first = await invoke(health()).result;
    const again = await invoke(health()).result;
    assert.deepEqual(again.requested, first.requested);
  });

  it('a closed Health event ends the maintenance of every node it names', async () => {
    const { publisher, result } = invoke(fixture('aws/health-system-reboot-closed.json'));
    const done = await result;
    assert.deepEqual(done.requested, []);
    assert.equal(done.ended.length, 2);
    assert.deepEqual(
      publisher.of('Maintenance Ended').map((d) => d.target),
      [{ nodeName: 'node-2' }, { nodeName: 'node-3' }],
    );
    assert.equal(publisher.of('Maintenance Ended')[0]?.reason, 'AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED closed');
  });

  it('instances that are no node of this cluster publish nothing', async () => {
    const event = health();
    (event.detail as Record<string, unknown>).affectedEntities = [{ entityValue: 'i-ffff0000' }];
    const { publisher, result } = invoke(event);
    assert.deepEqual(await result, { requested: [], ended: [], notNodes: ['i-ffff0000'] });
    assert.deepEqual(publisher.events, []);
  });

  it('a Spot interruption warning → a request that starts at once and gives up at the interruption', async () => {
    const event = structuredClone(
      fixture<Record<string, Record<string, unknown>>>('aws/spot-interruption-warning.json'),
    );
    (event.detail as Record<string, unknown>)['instance-id'] = 'i-abcd2222';
    event.time = '2023-01-27T02:00:00Z' as never;
    const { publisher, result } = invoke(event);
    const done = await result;
    assert.equal(done.requested.length, 1);
    const [requested] = publisher.of('Maintenance Requested');
    assert.equal(requested?.requester, 'aws.ec2');
    assert.deepEqual(requested?.target, { nodeName: 'node-2' });
    assert.equal(requested?.notBefore, undefined);
    assert.equal(requested?.deadline, '2023-01-27T02:02:00.000Z');
  });

  it('a notice type the policy ignores publishes nothing and is counted', async () => {
    const policy = parseNoticePolicy(JSON.stringify({ aws: { 'instance-stop': { action: 'ignore' } } }));
    assert.ok(!Array.isArray(policy));
    const { publisher, metrics, result } = invoke(health(), policy);
    assert.equal((await result).skipped, 'the policy ignores aws instance-stop');
    assert.deepEqual(publisher.events, []);
    assert.equal(metrics.get('ignored', 'aws-health'), 1);
  });

  const malformed: [string, (detail: Record<string, unknown>) => void, string][] = [
    [
      'another service',
      (d) => {
        d.service = 'RDS';
      },
      'detail.service: must be EC2',
    ],
    [
      'an issue, not a scheduled change',
      (d) => {
        d.eventTypeCategory = 'issue';
      },
      'detail.eventTypeCategory: must be scheduledChange',
    ],
    [
      'a code that names no instance',
      (d) => {
        d.eventTypeCode = 'AWS_EC2_DEDICATED_HOST_RETIREMENT_SCHEDULED';
      },
      'detail.eventTypeCode: must be one of',
    ],
    [
      'startTime in ISO 8601',
      (d) => {
        d.startTime = '2023-02-11T06:00:00Z';
      },
      'detail.startTime: must be an RFC 1123 date',
    ],
    [
      'no affected entities',
      (d) => {
        delete d.affectedEntities;
      },
      'detail.affectedEntities: is required',
    ],
    [
      'an entity that is no instance',
      (d) => {
        d.affectedEntities = [{ entityValue: 'h-0123456789abcdef0' }];
      },
      'detail.affectedEntities[0].entityValue: must be an EC2 instance id',
    ],
    [
      'an unknown status',
      (d) => {
        d.statusCode = 'pending';
      },
      'detail.statusCode: must be one of upcoming, open, closed',
    ],
  ];
  for (const [what, change, names] of malformed) {
    it(`a Health event with ${what}: nothing published, counted, not thrown`, async () => {
      const event = health();
      change(event.detail as Record<string, unknown>);
      const { publisher, metrics, result } = invoke(event);
      const done = await result;
      assert.ok(done.skipped?.includes(names), `${done.skipped} names ${names}`);
      assert.deepEqual(publisher.events, []);
      assert.equal(metrics.get('parseErrors', 'aws-health'), 1);
    });
  }

  it('a malformed Spot warning is counted under its own source', async () => {
    const event = structuredClone(
      fixture<Record<string, Record<string, unknown>>>('aws/spot-interruption-warning.json'),
    );
    (event.detail as Record<string, unknown>)['instance-action'] = 'reboot';
    const { metrics, result } = invoke(event);
    assert.match((await result).skipped ?? '', /detail\.instance-action: must be one of terminate, stop, hibernate/);
    assert.equal(metrics.get('parseErrors', 'aws-spot-interruption-warning'), 1);
  });
});
