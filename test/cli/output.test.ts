/**
 * The run's output as a person and a script see it, against the simulator's demo scenario:
 *  - piped: plain lines only, each pod's eviction in kubectl's words, and never 10 s without a line
 *    while the drain waits (the bare pod blocks it for ~20 s);
 *  - `drainbridge report --html/--svg` of that evacuation: parsed, every pod of the evacuation in it
 *    (the bare pod that blocked included), self-contained; the SVG is well-formed XML;
 *  - `--output json`: every line of stdout parses, items and outcome events among them;
 *  - in a pseudo-terminal (`script` from util-linux): the live display, redrawn in place, bars per branch
 *    with work (live-terminal.test.ts reads it in tmux at two sizes).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { XMLValidator } from 'fast-xml-parser';
import { parseDocument } from 'htmlparser2';
import { parse as parseYaml } from 'yaml';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { BUDGET_BLOCKED, holdDrainOfNode1, releaseDrainOfNode1 } from './demo-blockers.ts';
import { assertNoNoise, runCli, startCli } from './run-cli.ts';

const ESC = String.fromCharCode(27);
const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

/** The pods an evacuation of `node` moves or is blocked by: all but DaemonSet pods. */
async function podsToMove(client: KubeClient, node: string): Promise<string[]> {
  const pods = await client.listPodsOnNode(node);
  return pods
    .filter((pod) => !pod.metadata?.ownerReferences?.some((owner) => owner.kind === 'DaemonSet'))
    .map((pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`)
    .sort();
}

/** `[+12.3s] …` → 12.3 */
function stamps(stdout: string): number[] {
  return [...stdout.matchAll(/^\[\+(\d+\.\d)s\]/gm)].map((match) => Number(match[1]));
}

interface Element {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  children?: Element[];
  data?: string;
}

function elements(root: Element, match: (element: Element) => boolean): Element[] {
  const found: Element[] = [];
  const visit = (node: Element) => {
    if (match(node)) found.push(node);
    for (const child of node.children ?? []) visit(child);
  };
  visit(root);
  return found;
}

function textOf(node: Element): string {
  if (node.type === 'text') return node.data ?? '';
  return (node.children ?? []).map(textOf).join('');
}

describe('evacuate and report output', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  let dir: string;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
    dir = mkdtempSync(join(tmpdir(), 'drainbridge-report-'));
  });
  after(async () => {
    await cluster?.stop();
  });

  it('piped: plain lines, kubectl-style pod lines, a line at least every 10 s; the report shows every pod', async () => {
    holdDrainOfNode1(cluster.sim);
    const evacuated = await podsToMove(admin, 'node-1');
    const kubeconfig = cluster.kubeconfigPath;
    const run = startCli([
      'evacuate',
      'node-1',
      '--ignore-daemonsets',
      '--request-id',
      'piped',
      '--kubeconfig',
      kubeconfig,
    ]);
    await run.waitFor(new RegExp(`waiting — pods: .*${BUDGET_BLOCKED.source}`));
    // Blocked long enough for two heartbeats, then the operator clears the blocker.
    await run.waitFor(/still waiting — pods: .*\n(.|\n)*still waiting — pods: /, 30_000);
    await releaseDrainOfNode1(cluster.sim);
    const done = await run.exited;
    assert.equal(done.code, 0, done.stderr);
    assert.equal(assertNoNoise(done.stdout + done.stderr), undefined);
    assert.ok(!done.stdout.includes(ESC), 'no terminal control sequences when piped');
    const web = evacuated.filter((name) => name.startsWith('shop/'));
    for (const pod of web) {
      assert.match(done.stdout, new RegExp(`evicting pod ${pod}\\n`));
      assert.match(done.stdout, new RegExp(`pod/${pod.split('/')[1]} evicted\\n`));
    }
    const times = stamps(done.stdout);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    assert.ok(Math.max(...gaps) <= 10, `a line at least every 10 s; gaps: ${gaps.join(', ')}`);

    const html = join(dir, 'piped.html');
    const svg = join(dir, 'piped.svg');
    const report = await runCli(['report', 'piped', '--html', html, '--svg', svg, '--kubeconfig', kubeconfig]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /wrote .*piped\.html: 2 row\(s\), evacuation of node-1 \(NodeDrained\)/);
    const page = readFileSync(html, 'utf8');
    const document = parseDocument(page) as unknown as Element;
    const rows = elements(document, (e) => e.name === 'tr' && e.attribs?.class === 'item');
    const names = rows.map((row) => textOf((row.children ?? []).filter((c) => c.name === 'td')[1] as Element)).sort();
    assert.deepEqual(names, evacuated, 'every pod of the evacuation has a row in the table');
    const bars = elements(document, (e) => e.name === 'g' && e.attribs?.class === 'item');
    assert.deepEqual(bars.map((g) => g.attribs?.['data-name']).sort(), evacuated, 'and a bar in the picture');
    const phases = elements(document, (e) => e.name === 'g' && e.attribs?.class === 'phase').map(
      (g) => g.attribs?.['data-phase'],
    );
    assert.deepEqual(phases, ['NodeCordoned', 'NodeDraining', 'NodeDrained']);
    // One clock: drainbridge's, so that requested comes before every phase (not the API server's stamp).
    const fact = (term: string) => Date.parse(new RegExp(`<dt>${term}</dt><dd>([^<]+)</dd>`).exec(page)?.[1] ?? '');
    assert.ok(fact('requested') <= fact('NodeCordoned'), 'requested before the node was cordoned');
    assert.ok(fact('NodeCordoned') <= fact('NodeDrained'));
    assert.equal(elements(document, (e) => e.name === 'script' || e.name === 'link' || e.name === 'img').length, 0);
    assert.doesNotMatch(page, /\b(src|href)=/, 'nothing fetched: self-contained');
    const waited = rows.filter((row) => textOf(row).includes('PDB shop/web'));
    assert.ok(waited.length >= 1, 'a pod the budget held back shows its wait');

    const data = await runCli(['report', 'piped', '-o', 'json', '--kubeconfig', kubeconfig]);
    assert.equal(data.code, 0, data.stderr);
    const timeline = JSON.parse(data.stdout) as { items: { kind: string; name: string }[]; phase: string };
    assert.deepEqual(timeline.items.map((item) => item.name).sort(), evacuated, '-o json: the timeline as data');
    const yaml = await runCli(['report', 'piped', '--output=yaml', '--kubeconfig', kubeconfig]);
    assert.deepEqual(parseYaml(yaml.stdout), timeline, '-o yaml: the same document');

    const picture = readFileSync(svg, 'utf8');
    assert.equal(XMLValidator.validate(picture), true, 'the SVG is well-formed XML');
    const restored = await runCli(['restore', 'node-1', '--kubeconfig', kubeconfig]);
    assert.equal(restored.code, 0, restored.stderr);
  });

  it('-o json (--output json): only JSON lines on stdout, the items and outcomes among them', async () => {
    const kubeconfig = cluster.kubeconfigPath;
    const evacuated = await podsToMove(admin, 'node-2');
    const done = await runCli([
      'evacuate',
      'node-2',
      '--ignore-daemonsets',
      '--request-id',
      'as-json',
      '-o',
      'json',
      '--kubeconfig',
      kubeconfig,
    ]);
    assert.equal(done.code, 0, done.stderr);
    const lines = done.stdout.trimEnd().split('\n');
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const object of objects) {
      assert.equal(typeof object.type, 'string');
      assert.match(String(object.at), /^\d{4}-\d\d-\d\dT/);
    }
    const gone = objects
      .filter((o) => o.type === 'item' && o.change === 'gone')
      .map((o) => (o.item as { name: string }).name)
      .sort();
    assert.deepEqual(gone, evacuated, 'one item line per pod gone');
    assert.ok(objects.some((o) => o.type === 'event' && o.detailType === 'Evacuation Succeeded'));
    assert.ok(objects.some((o) => o.type === 'message' && String(o.text).startsWith('evacuated: node node-2')));
    const restored = await runCli(['restore', 'node-2', '--output', 'json', '--kubeconfig', kubeconfig]);
    assert.equal(restored.code, 0, restored.stderr);
    for (const line of restored.stdout.trimEnd().split('\n')) JSON.parse(line);
    assert.ok(restored.stdout.includes('"detailType":"Node Restored"'));
  });

  it('in a pseudo-terminal: the live display, bars per branch, redrawn in place', async () => {
    const kubeconfig = cluster.kubeconfigPath;
    const command = [process.execPath, BIN, 'evacuate', 'node-3', '--ignore-daemonsets', '--kubeconfig', kubeconfig]
      .map((word) => `'${word}'`)
      .join(' ');
    // script(1) gives the command a terminal (no size: the display falls back to 80×24); its output is ours.
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, screen);
    assert.match(screen, /drainbridge evacuate node-3 · NodeDraining · \d+ s/, 'the title line with the phase');
    assert.match(screen, / {2}pods +\[█+░*\] \d+\/\d+ pods evicted/, 'a bar for the pods branch');
    assert.doesNotMatch(screen, / {2}kubevirt +\[/, 'no bar for a branch with nothing to move');
    assert.ok(screen.includes(`${ESC}[2K`), 'the frame is erased and redrawn in place (log-update)');
    assert.match(screen, /evicting pod shop\/web-/, 'item lines scroll above it');
    assert.match(screen, /evacuated: node node-3 is cordoned/);
    const restored = await runCli(['restore', 'node-3', '--kubeconfig', kubeconfig]);
    assert.equal(restored.code, 0, restored.stderr);
  });
});
