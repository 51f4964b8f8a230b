/**
 * `drainbridge run` (a real child process) posts its notifications to a real HTTP receiver on loopback
 * while it evacuates a node of the simulator: started, blocked (naming the PodDisruptionBudget) once the
 * block outlasts DRAINBRIDGE_WEBHOOK_BLOCKED_AFTER, succeeded once the budget is gone, restored after the
 * uncordon; a bare pod fails an evacuation and the failure names it. The URL carries a token that never
 * shows in the process's output. A receiver that answers only 500s is retried with backoff while the
 * evacuation goes on without it; the notification given up is logged (without the URL) and counted.
 * With the circuit breaker, the Slack template's receiver hears admission paused after two failures and
 * admission resumed after `drainbridge resume`, with who resumed it and why it had paused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../cli/run-cli.ts';
import {
  type DrainbridgeProcess,
  metric,
  scrape,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';
import { type ReceivedPost, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TOKEN = 'T0KEN-hooks-9f8e7d6c5b4a';

const PDB = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web, namespace: shop }
spec:
  maxUnavailable: 0
  selector: { matchLabels: { app: web } }
`;

const BARE_POD = `apiVersion: v1
kind: Pod
metadata: { name: lonely, namespace: shop }
spec:
  nodeName: node-3
  containers: [{ name: c, image: busybox:1 }]
`;

function postFor(receiver: WebhookReceiver, event: string, node: string): ReceivedPost | undefined {
  return receiver.posts.find((post) => post.body.event === event && post.body.node === node);
}

describe('drainbridge run: webhook notifications', () => {
  let cluster: TestCluster;
  let receiver: WebhookReceiver;
  let run: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(3));
    receiver = await startWebhookReceiver();
    run = await startRun(cluster, {
      identity: 'run-notify',
      cordonEvacuates: 'all',
      env: {
        DRAINBRIDGE_MAX_HELD_NODES: '2',
        DRAINBRIDGE_WEBHOOK_URL: `${receiver.url}/hooks/${TOKEN}`,
        DRAINBRIDGE_WEBHOOK_TEMPLATE: 'json',
        DRAINBRIDGE_WEBHOOK_BLOCKED_AFTER: '2',
      },
    });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await receiver?.close();
    await cluster?.stop();
  });

  const seen = (): string => receiver.posts.map((p) => `${p.body.event} ${p.body.node}`).join(', ');

  it('started, blocked by the PodDisruptionBudget, succeeded, restored', async () => {
    cluster.sim.apply(PDB, 'pdb.yaml');
    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    await waitUntil('started', () => postFor(receiver, 'EvacuationStarted', 'node-2'), 60_000, { context: seen });
    const blocked = await waitUntil('blocked', () => postFor(receiver, 'EvacuationBlocked', 'node-2'), 60_000, {
      context: seen,
    });
    assert.match(String(blocked.body.blockers), /web/, 'the blocker names the budget or its pod');
    assert.match(String(blocked.body.summary), /evacuation blocked on node-2/);
    assert.equal(postFor(receiver, 'EvacuationSucceeded', 'node-2'), undefined, 'not done while blocked');

    assert.equal((await cluster.kubectl.run(['delete', 'pdb', 'web', '-n', 'shop'])).code, 0);
    await waitUntil('succeeded', () => postFor(receiver, 'EvacuationSucceeded', 'node-2'), 60_000, {
      context: seen,
    });
    assert.equal((await cluster.kubectl.run(['uncordon', 'node-2'])).code, 0);
    await waitUntil('restored', () => postFor(receiver, 'NodeRestored', 'node-2'), 60_000, { context: seen });
    assert.ok(receiver.posts.every((post) => post.path === `/hooks/${TOKEN}`));
  });

  it('a bare pod fails the evacuation; the failure names it', async () => {
    cluster.sim.apply(BARE_POD, 'bare-pod.yaml');
    assert.equal((await cluster.kubectl.run(['cordon', 'node-3'])).code, 0);
    const failed = await waitUntil('failed', () => postFor(receiver, 'EvacuationFailed', 'node-3'), 60_000, {
      context: seen,
    });
    assert.match(`${failed.body.reason} ${failed.body.blockers}`, /lonely/);
  });

  it('the URL and its token never appear in the log', () => {
    assert.ok(run.output.length > 0);
    assert.deepEqual(
      run.output.filter((line) => line.includes(TOKEN)),
      [],
    );
  });
});

describe('drainbridge run: a webhook that answers 500', () => {
  let cluster: TestCluster;
  let receiver: WebhookReceiver;
  let run: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(3));
    receiver = await startWebhookReceiver(Array.from({ length: 100 }, () => 500));
    run = await startRun(cluster, {
      identity: 'run-notify-500',
      cordonEvacuates: 'all',
      env: { DRAINBRIDGE_WEBHOOK_URL: `${receiver.url}/hooks/${TOKEN}`, DRAINBRIDGE_WEBHOOK_TEMPLATE: 'json' },
    });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await receiver?.close();
    await cluster?.stop();
  });

  const attempts = (event: string): ReceivedPost[] =>
    receiver.posts.filter((post) => post.body.event === event && post.body.node === 'node-2');

  it('retries with backoff, never delays the evacuation, logs and counts what it gave up', async () => {
    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    await waitUntil('the evacuation succeeded', () => attempts('EvacuationSucceeded').length > 0, 60_000);
    const [firstStarted] = attempts('EvacuationStarted');
    const [firstSucceeded] = attempts('EvacuationSucceeded');
    assert.ok(firstStarted && firstSucceeded);
    // Delivering "started" takes 15 s of backoff (1+2+4+8) before it is given up; the evacuation did not wait.
    assert.ok(
      attempts('EvacuationStarted').length < 5 && firstSucceeded.at - firstStarted.at < 15_000,
      'succeeded was sent while started was still being retried',
    );

    const givenUp = await run.waitForLog('notification not delivered', { event: 'EvacuationStarted' }, 40_000);
    assert.match(String(givenUp.why), /HTTP 500/);
    const started = attempts('EvacuationStarted');
    assert.equal(started.length, 5, 'five attempts in all');
    const gaps = started.slice(1).map((post, i) => post.at - (started[i] as ReceivedPost).at);
    assert.ok(
      gaps.every((gap, i) => i === 0 || gap > (gaps[i - 1] as number)),
      `each wait longer than the last: ${gaps.join(', ')} ms`,
    );
    const metrics = await scrape(await run.opsUrl());
    assert.equal(
      metric(metrics, 'drainbridge_notifications_total', { event: 'EvacuationStarted', outcome: 'failed' }),
      1,
    );
    assert.deepEqual(
      run.output.filter((line) => line.includes(TOKEN)),
      [],
    );
  });
});

const barePodOn = (node: string) => BARE_POD.replace('name: lonely', `name: lonely-${node}`).replace('node-3', node);

describe('drainbridge run: admission paused and resumed, told to a Slack webhook', () => {
  let cluster: TestCluster;
  let receiver: WebhookReceiver;
  let run: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(4));
    receiver = await startWebhookReceiver();
    run = await startRun(cluster, {
      identity: 'run-notify-breaker',
      cordonEvacuates: 'all',
      // The default template is Slack's: {"text": "<summary>"}.
      env: {
        DRAINBRIDGE_MAX_HELD_NODES: '3',
        DRAINBRIDGE_BREAKER: '2/1d',
        DRAINBRIDGE_WEBHOOK_URL: `${receiver.url}/hooks/${TOKEN}`,
      },
    });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await receiver?.close();
    await cluster?.stop();
  });

  const texts = (): string[] => receiver.posts.map((post) => String(post.body.text));
  const told = (pattern: RegExp) => texts().find((text) => pattern.test(text));

  it('two failures: admission PAUSED; drainbridge resume: admission resumed, by whom and why it had paused', async () => {
    for (const node of ['node-2', 'node-3']) {
      cluster.sim.apply(barePodOn(node), `bare-${node}.yaml`);
      assert.equal((await cluster.kubectl.run(['cordon', node])).code, 0);
      await waitUntil(`${node} failed`, () => told(new RegExp(`evacuation FAILED on ${node}`)), 60_000, {
        context: () => texts().join('\n'),
      });
    }
    const paused = await waitUntil('paused told', () => told(/^drainbridge: admission PAUSED/), 60_000, {
      context: () => texts().join('\n'),
    });
    assert.match(paused, /: 2 evacuations failed within 1d: .*node-2.*node-3/);
    assert.equal(told(/admission resumed/), undefined, 'not resumed before anyone resumes it');

    const kubeconfig = await cluster.kubeconfigFor('drainbridge');
    const resumed = await runCli(['resume', '--kubeconfig', kubeconfig]);
    assert.equal(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`);
    // The first admission after the resume publishes Admission Resumed on run's bus.
    assert.equal((await cluster.kubectl.run(['cordon', 'node-4'])).code, 0);
    const text = await waitUntil('resumed told', () => told(/^drainbridge: admission resumed/), 60_000, {
      context: () => texts().join('\n'),
    });
    assert.match(
      text,
      /^drainbridge: admission resumed: by \S+ \(paused since \d{4}-[^ ]+: 2 evacuations failed within 1d: /,
    );
    assert.equal(texts().filter((t) => /admission resumed/.test(t)).length, 1, 'told once');
    await waitUntil('node-4 is evacuated after the resume', () => told(/evacuation succeeded on node-4/), 60_000, {
      context: () => texts().join('\n'),
    });
  });
});
