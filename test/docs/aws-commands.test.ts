/**
 * The documentation's AWS blocks (`doc-test: aws`), checked offline: every `serverless deploy` line resolves
 * with `serverless print` and the same flags; every file and kustomize path a command reads exists (the
 * JSON ones parse); every state machine and role name a command uses is one the configuration deploys.
 * aws-commands.ts says why this is what can be checked without an account.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  checkoutPathsOf,
  deployedNamesOf,
  flagOf,
  namesOfStage,
  type PrintedService,
  printArgumentsOf,
  shellWords,
} from './aws-commands.ts';
import { commandsOf } from './blocks.ts';
import { documentedBlocks } from './run-block.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

function print(args: readonly string[]): PrintedService {
  const ran = spawnSync('npx', ['serverless', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(ran.status, 0, `serverless ${args.join(' ')}:\n${ran.stderr}`);
  return JSON.parse(ran.stdout) as PrintedService;
}

describe('the AWS blocks of README.md and docs/, checked offline', () => {
  const commands = documentedBlocks()
    .filter((block) => block.kind === 'aws')
    .flatMap((block) => commandsOf(block).map((command) => ({ where: `${block.file}:${command.line}`, command })));

  it('the pages have AWS commands to check', () => {
    assert.ok(commands.some(({ command }) => printArgumentsOf(command.text)));
  });

  for (const { where, command } of commands) {
    const printArgs = printArgumentsOf(command.text);
    if (printArgs) {
      it(`${where}: serverless deploy resolves (serverless print, same flags)`, { timeout: 150_000 }, () => {
        const printed = print(printArgs);
        const words = shellWords(command.text);
        assert.equal(printed.provider.stage, flagOf(words, 'stage') ?? 'dev', 'the stage deployed');
        const region = flagOf(words, 'region');
        if (region) assert.equal(printed.provider.region, region, 'the region deployed');
      });
    }
    for (const path of checkoutPathsOf(command.text)) {
      it(`${where}: ${path} is in the checkout`, () => {
        assert.ok(existsSync(join(ROOT, path)), `${path} does not exist`);
        if (path.endsWith('.json')) JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
      });
    }
    const used = deployedNamesOf(command.text);
    if (used.stateMachines.length + used.roles.length > 0) {
      it(`${where}: the names it uses are the stage's (${[...used.stateMachines, ...used.roles].join(', ')})`, () => {
        const deployed = namesOfStage(print(['print', '--stage', 'prod', '--format', 'json']));
        for (const name of used.stateMachines) assert.ok(deployed.stateMachines.includes(name), name);
        for (const name of used.roles) assert.ok(deployed.roles.includes(name), name);
      });
    }
  }
});

describe('reading a documented AWS command', () => {
  it('splits words as the shell does and turns deploy into print', () => {
    assert.deepEqual(shellWords(`npx serverless deploy --stage prod --param="a=b c" \\\n  --param='d={"e":1}'`), [
      'npx',
      'serverless',
      'deploy',
      '--stage',
      'prod',
      '--param=a=b c',
      '--param=d={"e":1}',
    ]);
    assert.deepEqual(printArgumentsOf('npx serverless deploy --param="k=$CA"'), [
      'print',
      '--param=k=example-ca',
      '--format',
      'json',
    ]);
    assert.equal(printArgumentsOf('aws events put-events --entries file://events/x.json'), undefined);
  });

  it('finds the paths of the checkout and the deployed names a command uses', () => {
    assert.deepEqual(checkoutPathsOf('aws events put-events --entries file://events/x.json'), ['events/x.json']);
    assert.deepEqual(checkoutPathsOf('aws secretsmanager create-secret --secret-string file://mine.yaml'), []);
    assert.deepEqual(checkoutPathsOf('kubectl apply -k deploy/overlays/forwarder'), ['deploy/overlays/forwarder']);
    assert.deepEqual(
      deployedNamesOf('aws stepfunctions start-execution --state-machine-arn arn:aws:states:r:1:stateMachine:m-prod'),
      {
        stateMachines: ['m-prod'],
        roles: [],
      },
    );
    assert.deepEqual(
      namesOfStage({
        service: 's',
        provider: { stage: 'prod', region: 'r' },
        stepFunctions: { stateMachines: { a: { name: 'm' } } },
      }),
      { stateMachines: ['m'], roles: ['s-prod-r-lambdaRole'] },
    );
  });
});
