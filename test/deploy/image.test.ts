/**
 * The image's bundle (scripts/bundle.ts): what each command loads. The forwarder's process must not load
 * @kubernetes/client-node, the embedded runtime or the simulator (its memory budget, bench/README.md):
 * the chunks it reads are followed from the metafile — static imports from the entry, the forwarder
 * command and the mode it starts — and none may hold them. And the image's help lists each command
 * the catalog marks as shipped (cli/commands/catalog.ts), answering as the full CLI does.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { Metafile } from 'esbuild';
import { COMMAND_CATALOG } from '../../cli/commands/catalog.ts';
import { forwarderCommand } from '../../cli/commands/forwarder.ts';
import { commandHelp } from '../../cli/dispatch.ts';
import { main } from '../../cli/main.ts';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { bundle } from '../../scripts/bundle.ts';
import { startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { DrainbridgeProcess, forwarderNodeFlags, spreadScenario, startTestCluster } from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';
import { testContext } from '../unit/cli/context.ts';

const outdir = mkdtempSync(join(tmpdir(), 'drainbridge-bundle-'));
let meta: Metafile;

/** The output files whose inputs include `input`. */
function chunksHolding(input: string): string[] {
  return Object.entries(meta.outputs)
    .filter(([, output]) => Object.hasOwn(output.inputs, input))
    .map(([file]) => file);
}

/** Every output a process reads once it has loaded `starts`: their static imports, transitively. */
function loadedWith(starts: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...starts];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of meta.outputs[file]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) pending.push(imported.path);
    }
  }
  return seen;
}

function inputsOf(outputs: Set<string>): string[] {
  return [...outputs].flatMap((file) => Object.keys(meta.outputs[file]?.inputs ?? {}));
}

/** Runs the bundle as the image does: its exit status, and stdout (or stderr when it fails). */
function run(args: readonly string[]): { code: number; out: string } {
  try {
    return {
      code: 0,
      out: execFileSync(process.execPath, [join(outdir, 'drainbridge.mjs'), ...args], {
        encoding: 'utf8',
        stdio: 'pipe',
      }),
    };
  } catch (error) {
    const failed = error as { status: number; stderr: string };
    return { code: failed.status, out: failed.stderr };
  }
}

describe('the image bundle', () => {
  before(async () => {
    meta = await bundle(outdir);
  });

  for (const [mode, modules] of Object.entries({
    'drainbridge forwarder': ['lib/sources/forwarder/index.ts'],
    'drainbridge forwarder --node-agent': ['lib/sources/forwarder/index.ts', 'lib/sources/node-agent/node-agent.ts'],
  })) {
    it(`${mode} loads neither client-node, nor the embedded runtime, nor the simulator`, () => {
      const entry = join(outdir, 'drainbridge.mjs').replace(`${process.cwd()}/`, '');
      const starts = [entry, ...['cli/commands/forwarder.ts', ...modules].flatMap(chunksHolding)];
      assert.ok(starts.length >= 3, `chunks found: ${starts.join(', ')}`);
      const inputs = inputsOf(loadedWith(starts));
      assert.ok(inputs.includes('lib/clients/kube/http/client.ts'), 'the lean client is what it loads');
      const forbidden = inputs.filter((input) =>
        /^(node_modules\/@kubernetes\/client-node\/|embedded\/|sim\/|lib\/kube\/client\.ts$)/.test(input),
      );
      assert.deepEqual(forbidden, []);
    });
  }

  it("drainbridge --help lists exactly the catalog's image commands; the others are not in the bundle", () => {
    const help = execFileSync(process.execPath, [join(outdir, 'drainbridge.mjs'), '--help'], { encoding: 'utf8' });
    const lines = help.split('\n');
    const listed = lines.slice(lines.indexOf('Commands:') + 1, lines.indexOf('', lines.indexOf('Commands:')));
    const shipped = COMMAND_CATALOG.filter((entry) => entry.inImage);
    assert.deepEqual(
      listed.map((line) => /^ {2}(\S+) +(.+)$/.exec(line)?.slice(1)),
      shipped.map((entry) => [entry.name, entry.summary]),
    );
    const inputs = Object.values(meta.outputs).flatMap((output) => Object.keys(output.inputs));
    const notShipped = COMMAND_CATALOG.filter((entry) => !entry.inImage).map((e) => `cli/commands/${e.name}.ts`);
    assert.deepEqual(
      inputs.filter((input) => input.startsWith('sim/') || notShipped.includes(input)),
      [],
      'neither the simulator nor a command the image does not ship',
    );
  });

  it('answers a command line that names no command with the same words and status as the full CLI', async () => {
    for (const argv of [['evacuat'], ['nosuch'], ['--node', 'node-1']]) {
      const io = testContext();
      const code = await main(argv, undefined, io);
      const image = run(argv);
      assert.deepEqual(image, { code, out: `${io.stderr.join('\n')}\n` }, argv.join(' '));
    }
  });

  it('a command loads when it runs: forwarder --help, an unknown command, a usage error', () => {
    assert.deepEqual(run(['forwarder', '--help']), { code: 0, out: `${commandHelp(forwarderCommand)}\n` });
    assert.deepEqual(run(['sim']), {
      code: 2,
      out: `drainbridge: "sim" is not in the container image, which ships the commands a cluster runs: run it from the npm package (npx drainbridge sim)\nRun 'drainbridge --help' for the commands.\n`,
    });
    const misplaced = run(['forwarder', '--node', 'node-1']);
    assert.equal(misplaced.code, 2);
    assert.match(misplaced.out, /--node needs --node-agent/);
    // The same logging flags as the full CLI: a bad value is a usage error naming the flag.
    const badLog = run(['forwarder', '--log-format', 'xml']);
    assert.equal(badLog.code, 2);
    assert.match(badLog.out, /--log-format/);
  });

  // The AWS SDK is loaded on first use with import(); in this ES-module bundle a CommonJS package's
  // exports came back under `default` only and every PutEvents failed ("PutEventsCommand is not a
  // constructor") while the sources, run by Node, worked (lib/util/named-exports.ts).
  it("the bundle's forwarder publishes a cordon through PutEvents (the AWS SDK loaded on first use)", async () => {
    const cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0, speed: 1 }), workloads: [] });
    const published: string[] = [];
    const bus = new InProcessBus({
      rules: [],
      busName: 'drainbridge',
      start: async () => undefined,
      listener: {
        unmatched: (event) => published.push(`${event['detail-type']} ${JSON.stringify(event.detail.target)}`),
      },
    });
    const endpoint = await startEventBridgeEndpoint(bus);
    const forwarder = new DrainbridgeProcess(
      ['forwarder', '--kubeconfig', await cluster.kubeconfigFor('drainbridge-forwarder'), '--cordon-evacuates', 'all'],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDIMAGETEST',
        AWS_SECRET_ACCESS_KEY: 'image-test',
      },
      { entry: join(outdir, 'drainbridge.mjs'), nodeFlags: forwarderNodeFlags() },
    );
    try {
      await waitUntil(
        'it leads',
        () => forwarder.lines.some((l) => /this replica leads/.test(String(l.message))),
        30_000,
      );
      await cluster.admin.patchNode('node-1', { spec: { unschedulable: true } } as never);
      await waitUntil('Node Cordoned on the bus', () => published.length > 0, 15_000, {
        context: () => forwarder.output.slice(-10).join('\n'),
      });
      assert.deepEqual(published, ['Node Cordoned {"nodeName":"node-1"}']);
      assert.deepEqual(
        forwarder.lines.filter((l) => l.level === 'ERROR').map((l) => l.message),
        [],
        'no error logged',
      );
    } finally {
      forwarder.kill('SIGTERM');
      await forwarder.exited;
      await endpoint.close();
      await cluster.stop();
    }
  });
});
