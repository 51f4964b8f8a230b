/**
 * The layering check (.dependency-cruiser.cjs) can fail: each rule is run on a small tree that breaks
 * it, and on one that keeps to the layers. (`npm run lint` runs it on the real tree.)
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const dirs: string[] = [];

/** Writes `files` (path → source) into a fresh folder and runs the check there; its output and exit code. */
async function check(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-layers-'));
  dirs.push(dir);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const folders = [...new Set(Object.keys(files).map((path) => path.split('/')[0] ?? ''))];
  const args = [DEPCRUISE, '--config', CONFIG, '--output-type', 'err', ...folders];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: dir });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the layering check', () => {
  it('passes a tree that keeps to the layers', async () => {
    const result = await check({
      'lib/util/a.ts': 'export const a = 1;\n',
      'lib/config/b.ts': "import { a } from '../util/a.ts';\nexport const b = a;\n",
      'functions/f.ts': "import { b } from '../lib/config/b.ts';\nexport const f = b;\n",
      'embedded/e.ts': "import { f } from '../functions/f.ts';\nexport const e = f;\n",
      'cli/c.ts': "import { e } from '../embedded/e.ts';\nexport const c = e;\n",
    });
    assert.equal(result.code, 0, result.output);
  });

  it('refuses lib/ importing the wiring above it, and functions/ importing anything but lib/', async () => {
    const result = await check({
      'lib/workflow/w.ts': "import { f } from '../../functions/f.ts';\nexport const w = f;\n",
      'functions/f.ts': "import { c } from '../cli/c.ts';\nexport const f = c;\n",
      'cli/c.ts': 'export const c = 1;\n',
    });
    assert.notEqual(result.code, 0);
    assert.match(result.output, /lib-stays-below: lib\/workflow\/w\.ts → functions\/f\.ts/);
    assert.match(result.output, /functions-import-only-lib: functions\/f\.ts → cli\/c\.ts/);
  });

  it('refuses import cycles between files (type-only too) and between lib/ folders', async () => {
    const result = await check({
      'lib/util/a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
      'lib/util/b.ts': "import type { A } from './a.ts';\nexport type B = { a?: A };\n",
      'lib/config/c.ts': "import { n } from '../nova/n.ts';\nexport const c = n;\n",
      'lib/nova/n.ts': "import { o } from '../openstack/o.ts';\nexport const n = o;\n",
      'lib/openstack/o.ts': "import { s } from '../config/s.ts';\nexport const o = s;\n",
      'lib/config/s.ts': 'export const s = 1;\n',
    });
    assert.notEqual(result.code, 0);
    assert.match(result.output, /no-cycles: lib\/util\/a\.ts →/);
    assert.match(result.output, /no-lib-folder-cycles: lib\/config →\s+lib\/nova →\s+lib\/openstack →\s+lib\/config/);
  });

  it("keeps the admission Lease's records and the owner claim to their one reader and writer", async () => {
    const kept = await check({
      'lib/admission/records.ts': "export const QUEUE = 'q';\n",
      'lib/admission/index.ts': "import { QUEUE } from './records.ts';\nexport const view = () => QUEUE;\n",
      'lib/workflow/owner-record.ts': "export const OWNER = 'o';\n",
      'lib/workflow/ownership.ts': "import { OWNER } from './owner-record.ts';\nexport const owner = () => OWNER;\n",
      'cli/status.ts':
        "import { view } from '../lib/admission/index.ts';\nimport { owner } from '../lib/workflow/ownership.ts';\nexport const s = [view(), owner()];\n",
    });
    assert.equal(kept.code, 0, kept.output);
    const broken = await check({
      'lib/admission/records.ts': "export const QUEUE = 'q';\n",
      'lib/workflow/owner-record.ts': "export const OWNER = 'o';\n",
      'lib/workflow/repair.ts': "import { QUEUE } from '../admission/records.ts';\nexport const r = QUEUE;\n",
      'cli/status.ts': "import { OWNER } from '../lib/workflow/owner-record.ts';\nexport const s = OWNER;\n",
    });
    assert.notEqual(broken.code, 0);
    assert.match(
      broken.output,
      /admission-through-its-facade: lib\/workflow\/repair\.ts → lib\/admission\/records\.ts/,
    );
    assert.match(broken.output, /owner-claim-through-ownership: cli\/status\.ts → lib\/workflow\/owner-record\.ts/);
  });

  it('keeps the floors in the order events travel: sources, bus, workflow, branches, clients, model', async () => {
    const kept = await check({
      'lib/model/m.ts': 'export const m = 1;\n',
      'lib/clients/kube/k.ts': "import { m } from '../../model/m.ts';\nexport const k = m;\n",
      'lib/branches/pods/index.ts': "import { k } from '../../clients/kube/k.ts';\nexport const p = k;\n",
      'lib/bus/b.ts': "import { m } from '../model/m.ts';\nexport const b = m;\n",
      'lib/workflow/w.ts':
        "import { p } from '../branches/pods/index.ts';\nimport { b } from '../bus/b.ts';\nexport const w = [p, b];\n",
      'lib/sources/cordon/s.ts':
        "import { b } from '../../bus/b.ts';\nimport { p } from '../../branches/pods/index.ts';\nexport const s = [b, p];\n",
      'cli/c.ts': "import { p } from '../lib/branches/pods/index.ts';\nexport const c = p;\n",
    });
    assert.equal(kept.code, 0, kept.output);
    const broken = await check({
      'lib/model/m.ts': "import { k } from '../clients/kube/k.ts';\nexport const m = k;\n",
      'lib/clients/kube/k.ts': "import { p } from '../../branches/pods/part.ts';\nexport const k = p;\n",
      'lib/branches/pods/part.ts': "import { w } from '../../workflow/w.ts';\nexport const p = w;\n",
      'lib/workflow/w.ts': 'export const w = 1;\n',
      'lib/bus/b.ts': "import { w } from '../workflow/w.ts';\nexport const b = w;\n",
      'lib/sources/cordon/s.ts': "import { w } from '../../workflow/w.ts';\nexport const s = w;\n",
      'cli/c.ts': "import { p } from '../lib/branches/pods/part.ts';\nexport const c = p;\n",
    });
    assert.notEqual(broken.code, 0);
    assert.match(broken.output, /sources-stay-out-of-the-workflow: lib\/sources\/cordon\/s\.ts → lib\/workflow\/w\.ts/);
    assert.match(broken.output, /bus-below-its-users: lib\/bus\/b\.ts → lib\/workflow\/w\.ts/);
    assert.match(broken.output, /branches-below-the-workflow: lib\/branches\/pods\/part\.ts → lib\/workflow\/w\.ts/);
    assert.match(
      broken.output,
      /clients-below-the-branches: lib\/clients\/kube\/k\.ts → lib\/branches\/pods\/part\.ts/,
    );
    assert.match(broken.output, /model-at-the-bottom: lib\/model\/m\.ts → lib\/clients\/kube\/k\.ts/);
    assert.match(broken.output, /cli-through-facades: cli\/c\.ts → lib\/branches\/pods\/part\.ts/);
  });

  it("keeps the CLI to each lib/ folder's facade, and the embedded runtime to the branches' facades", async () => {
    const facade = {
      'lib/progress/mailboxes.ts': 'export const mailbox = 1;\n',
      'lib/progress/index.ts': "export { mailbox } from './mailboxes.ts';\n",
      'lib/branches/pods/part.ts': 'export const p = 1;\n',
      'lib/branches/pods/index.ts': "export { p } from './part.ts';\n",
      'lib/model/m.ts': 'export const m = 1;\n',
    };
    const kept = await check({
      ...facade,
      'cli/c.ts':
        "import { mailbox } from '../lib/progress/index.ts';\nimport { m } from '../lib/model/m.ts';\nexport const c = [mailbox, m];\n",
      'embedded/e.ts': "import { p } from '../lib/branches/pods/index.ts';\nexport const e = p;\n",
    });
    assert.equal(kept.code, 0, kept.output);
    const broken = await check({
      ...facade,
      'cli/c.ts': "import { mailbox } from '../lib/progress/mailboxes.ts';\nexport const c = mailbox;\n",
      'embedded/e.ts': "import { p } from '../lib/branches/pods/part.ts';\nexport const e = p;\n",
    });
    assert.notEqual(broken.code, 0);
    assert.match(broken.output, /cli-through-facades: cli\/c\.ts → lib\/progress\/mailboxes\.ts/);
    assert.match(broken.output, /embedded-through-branch-facades: embedded\/e\.ts → lib\/branches\/pods\/part\.ts/);
  });

  it('refuses an import it cannot resolve (it could not judge it)', async () => {
    const result = await check({ 'lib/x.ts': "import { y } from './missing.ts';\nexport const x = y;\n" });
    assert.notEqual(result.code, 0);
    assert.match(result.output, /resolvable: lib\/x\.ts → \.\/missing\.ts/);
  });
});
