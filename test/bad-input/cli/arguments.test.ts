/** Bad command lines, for every command: refused (exit 2 unless said), naming the flag or operand; no write. */
import { type BadInput, corpusSuite, scratch } from './support.ts';

const K = ['--kubeconfig', '{sa}'];
const evacuate = (...args: string[]) => ['evacuate', 'node-1', ...args, ...K];
const long = 'x'.repeat(300);

const CASES: BadInput[] = [
  // the command itself
  {
    name: 'a mistyped command',
    argv: ['evacaute', 'node-1'],
    names: ['unknown command "evacaute"', 'did you mean "evacuate"'],
  },
  { name: 'a flag before the command', argv: ['--kubeconfig', '{sa}', 'evacuate'], names: ['a command comes first'] },
  { name: 'a command that does not exist at all', argv: ['frobnicate'], names: ['unknown command "frobnicate"'] },
  // evacuate: operands
  { name: 'evacuate without NODE', argv: ['evacuate', ...K], names: ['missing NODE'] },
  {
    name: 'evacuate with two nodes',
    argv: ['evacuate', 'node-1', 'node-2', ...K],
    names: ['unexpected argument "node-2"'],
  },
  { name: 'evacuate an empty node name', argv: ['evacuate', '', ...K], names: [/NODE: /] },
  { name: 'evacuate a node name that is not a name', argv: ['evacuate', 'Node_1!', ...K], names: ['NODE: '] },
  {
    name: 'evacuate a node that does not exist',
    argv: ['evacuate', 'node-9', ...K],
    names: ['node "node-9" not found'],
  },
  // evacuate: flags
  { name: 'a mistyped drain flag', argv: evacuate('--forse'), names: ['unknown flag --forse', 'did you mean --force'] },
  { name: 'a flag with one dash', argv: evacuate('-force'), names: ['unknown flag -force', 'did you mean --force'] },
  { name: 'an unknown short flag', argv: evacuate('-q'), names: ['unknown flag -q'] },
  { name: '--grace-period in hex', argv: evacuate('--grace-period=0x10'), names: ['--grace-period', '"0x10"'] },
  { name: '--grace-period not a number', argv: evacuate('--grace-period=soon'), names: ['--grace-period', '"soon"'] },
  { name: '--grace-period empty', argv: evacuate('--grace-period='), names: ['--grace-period: the value is empty'] },
  {
    name: '--grace-period without its value',
    argv: ['evacuate', 'node-1', ...K, '--grace-period'],
    names: ['--grace-period needs a value'],
  },
  { name: '--grace-period with an exponent', argv: evacuate('--grace-period=1e3'), names: ['--grace-period', '"1e3"'] },
  { name: '--grace-period with a fraction', argv: evacuate('--grace-period=2.5'), names: ['--grace-period', '"2.5"'] },
  { name: '--timeout without a unit', argv: evacuate('--timeout=90'), names: ['--timeout', '"90"'] },
  { name: '--timeout with a bad unit', argv: evacuate('--timeout=5x'), names: ['--timeout', '"5x"'] },
  { name: '--timeout negative', argv: evacuate('--timeout=-5s'), names: ['--timeout', '"-5s"'] },
  { name: '--chunk-size negative', argv: evacuate('--chunk-size=-1'), names: ['--chunk-size', 'must not be negative'] },
  { name: '--chunk-size a fraction', argv: evacuate('--chunk-size=1.5'), names: ['--chunk-size', '"1.5"'] },
  {
    name: '--skip-wait-for-delete-timeout negative',
    argv: evacuate('--skip-wait-for-delete-timeout=-3'),
    names: ['--skip-wait-for-delete-timeout', 'must not be negative'],
  },
  { name: '--pod-selector unbalanced', argv: evacuate('--pod-selector=app in (web'), names: ['--pod-selector'] },
  { name: '--pod-selector nonsense', argv: evacuate('--pod-selector=!!'), names: ['--pod-selector'] },
  { name: '--force=maybe', argv: evacuate('--force=maybe'), names: ['--force: must be true or false, not "maybe"'] },
  { name: '--ignore-daemonsets=1', argv: evacuate('--ignore-daemonsets=1'), names: ['--ignore-daemonsets', '"1"'] },
  { name: '--dry-run=yes', argv: evacuate('--dry-run=yes'), names: ['--dry-run', '"yes"'] },
  {
    name: '--kubevirt-restart-unmigratable=maybe',
    argv: evacuate('--kubevirt-restart-unmigratable=maybe'),
    names: ['--kubevirt-restart-unmigratable', '"maybe"'],
  },
  {
    name: 'a mistyped --kubevirt opt-in',
    argv: evacuate('--kubevirt-restart-unmigrateable'),
    names: ['did you mean --kubevirt-restart-unmigratable'],
  },
  { name: '--deadline empty', argv: evacuate('--deadline='), names: ['--deadline: the value is empty'] },
  { name: '--deadline in words', argv: evacuate('--deadline=tomorrow'), names: ['--deadline'] },
  {
    name: '--deadline already passed',
    argv: evacuate('--deadline=2020-01-01T00:00:00Z'),
    names: ['--deadline', 'has already passed'],
  },
  { name: '--deadline an impossible date', argv: evacuate('--deadline=2026-13-45T00:00:00Z'), names: ['--deadline'] },
  { name: '--deadline without a time zone', argv: evacuate('--deadline=2099-01-01T00:00:00'), names: ['--deadline'] },
  { name: '--request-id empty', argv: evacuate('--request-id='), names: ['--request-id: the value is empty'] },
  { name: '--request-id with spaces', argv: evacuate('--request-id', 'my request'), names: ['--request-id'] },
  { name: '--request-id too long', argv: evacuate('--request-id', long), names: ['--request-id'] },
  { name: '--reason empty', argv: evacuate('--reason='), names: ['--reason: the value is empty'] },
  { name: '--reason only blanks', argv: evacuate('--reason=   '), names: ['--reason: the value is empty'] },
  {
    name: '--kubeconfig empty',
    argv: ['evacuate', 'node-1', '--kubeconfig='],
    names: ['--kubeconfig: the value is empty'],
  },
  { name: '--context empty', argv: evacuate('--context='), names: ['--context: the value is empty'] },
  { name: '--context that the kubeconfig lacks', argv: evacuate('--context=nosuch'), names: ['context "nosuch"'] },
  { name: '--log-level unknown', argv: evacuate('--log-level=verbose'), names: ['--log-level', '"verbose"'] },
  { name: '--log-format unknown', argv: evacuate('--log-format=xml'), names: ['--log-format', '"xml"'] },
  { name: '--log-file empty', argv: evacuate('--log-file='), names: ['--log-file: must name a file'] },
  {
    name: '--log-file in a missing directory',
    argv: evacuate('--log-file=/nonexistent-dir/x.log'),
    names: ['--log-file', '/nonexistent-dir/x.log'],
  },
  {
    name: '--log-level without its value',
    argv: ['evacuate', 'node-1', ...K, '--log-level'],
    names: ['--log-level needs a value'],
  },
  // restore
  { name: 'restore without NODE', argv: ['restore', ...K], names: ['missing NODE'] },
  {
    name: 'restore with an extra operand',
    argv: ['restore', 'node-1', 'now', ...K],
    names: ['unexpected argument "now"'],
  },
  { name: 'restore a node that does not exist', argv: ['restore', 'node-9', ...K], names: ['node "node-9" not found'] },
  {
    name: 'restore --request-id empty',
    argv: ['restore', 'node-1', '--request-id=', ...K],
    names: ['--request-id: the value is empty'],
  },
  {
    name: 'restore a mistyped flag',
    argv: ['restore', 'node-1', '--requestid', 'x', ...K],
    names: ['unknown flag --requestid', 'did you mean --request-id'],
  },
  { name: 'restore with a drain flag', argv: ['restore', 'node-1', '--force', ...K], names: ['unknown flag --force'] },
  {
    name: 'restore a request that holds nothing',
    argv: ['restore', 'node-1', '--request-id', 'nosuch', ...K],
    exit: 5,
    names: ['request nosuch does not hold node node-1'],
  },
  // abort
  { name: 'abort without NODE', argv: ['abort', ...K], names: ['missing NODE'] },
  { name: 'abort a node that does not exist', argv: ['abort', 'node-9', ...K], names: ['node "node-9" not found'] },
  { name: 'abort a node nothing runs on', argv: ['abort', 'node-2', ...K], exit: 5, names: ['nothing to abort'] },
  {
    name: 'abort a request that does not exist',
    argv: ['abort', 'node-1', '--request-id', 'FUTURE', ...K],
    exit: 5,
    names: ['no running or held request "FUTURE"', 'no Evacuation record'],
  },
  {
    name: 'abort a mistyped flag',
    argv: ['abort', 'node-1', '--reqest-id=x', ...K],
    names: ['unknown flag --reqest-id', 'did you mean --request-id'],
  },
  // repair
  { name: 'repair without NODE', argv: ['repair', ...K], names: ['missing NODE'] },
  {
    name: 'repair with two nodes',
    argv: ['repair', 'node-1', 'node-2', ...K],
    names: ['unexpected argument "node-2"'],
  },
  { name: 'repair --yes=maybe', argv: ['repair', 'node-1', '--yes=maybe', ...K], names: ['--yes', '"maybe"'] },
  {
    name: 'repair a mistyped flag',
    argv: ['repair', 'node-1', '--yse', ...K],
    names: ['unknown flag --yse', 'did you mean --yes'],
  },
  {
    name: 'repair a node that does not exist',
    argv: ['repair', 'node-9', '--yes', ...K],
    names: ['node "node-9" not found'],
  },
  // plan
  { name: 'plan without NODE', argv: ['plan', ...K], names: ['missing NODE'] },
  { name: 'plan a node that does not exist', argv: ['plan', 'node-9', ...K], names: ['node "node-9" not found'] },
  {
    name: 'plan --server-dry-run=maybe',
    argv: ['plan', 'node-1', '--server-dry-run=maybe', ...K],
    names: ['--server-dry-run', '"maybe"'],
  },
  { name: 'plan --json=2', argv: ['plan', 'node-1', '--json=2', ...K], names: ['--json', '"2"'] },
  {
    name: 'plan --chunk-size in hex',
    argv: ['plan', 'node-1', '--chunk-size=0x1', ...K],
    names: ['--chunk-size', '"0x1"'],
  },
  {
    name: 'plan --infra-pod-selector nonsense',
    argv: ['plan', 'node-1', '--infra-pod-selector==x', ...K],
    names: ['--infra-pod-selector'],
  },
  {
    name: 'plan --grace-period with a unit',
    argv: ['plan', 'node-1', '--grace-period=30s', ...K],
    names: ['--grace-period', '"30s"'],
  },
  // check
  { name: 'check with an operand', argv: ['check', 'node-1', ...K], names: ['unexpected argument "node-1"'] },
  {
    name: 'check --disable-eviction=x',
    argv: ['check', '--disable-eviction=x', ...K],
    names: ['--disable-eviction', '"x"'],
  },
  // sim
  {
    name: 'sim --scenario that does not exist',
    argv: ['sim', '--scenario', 'nosuch'],
    names: ['--scenario: "nosuch" is neither a bundled scenario (busy-node, demo'],
  },
  { name: 'sim --scenario without its value', argv: ['sim', '--scenario'], names: ['--scenario needs a value'] },
  { name: 'sim --scenario not YAML', argv: ['sim', '--scenario', '{dir}/garbage.yaml'], names: ['--scenario'] },
  {
    name: 'sim --scenario of the wrong shape',
    argv: ['sim', '--scenario', '{dir}/wrong.yaml'],
    names: ['--scenario', 'nodes'],
  },
  {
    name: 'sim --port too large',
    argv: ['sim', '--port', '70000'],
    names: ['--port: must be between 0 and 65535, not 70000'],
  },
  { name: 'sim --port negative', argv: ['sim', '--port=-1'], names: ['--port'] },
  { name: 'sim --port in words', argv: ['sim', '--port=http'], names: ['--port: must be a whole number, not "http"'] },
  { name: 'sim --speed 0', argv: ['sim', '--speed', '0'], names: ['--speed: must be greater than 0'] },
  { name: 'sim --speed negative', argv: ['sim', '--speed=-3'], names: ['--speed'] },
  {
    name: 'sim --speed with an exponent',
    argv: ['sim', '--speed=1e3'],
    names: ['--speed: must be a number, not "1e3"'],
  },
  { name: 'sim with an operand', argv: ['sim', 'small'], names: ['unexpected argument "small"'] },
  { name: 'sim --no-tls=perhaps', argv: ['sim', '--no-tls=perhaps'], names: ['--no-tls', '"perhaps"'] },
  // demo
  {
    name: 'demo --speed 0',
    argv: ['demo', '--speed', '0'],
    names: ['--speed: must be greater than 0 and at most 1000, not 0'],
  },
  { name: 'demo --speed too fast', argv: ['demo', '--speed', '2000'], names: ['--speed', 'at most 1000'] },
  {
    name: 'demo --speed in words',
    argv: ['demo', '--speed', 'fast'],
    names: ['--speed: must be a number, not "fast"'],
  },
  { name: 'demo with an operand', argv: ['demo', 'now'], names: ['unexpected argument "now"'] },
  // completion
  { name: 'completion without a shell', argv: ['completion'], names: ['missing SHELL'] },
  {
    name: 'completion for an unsupported shell',
    argv: ['completion', 'fish'],
    names: ['SHELL must be one of bash, zsh, not "fish"'],
  },
  { name: 'completion for a mistyped shell', argv: ['completion', 'bsh'], names: ['did you mean bash'] },
];

corpusSuite('bad command lines (drainbridge CLI)', CASES, {
  prepare: (corpus) => {
    scratch(corpus, 'garbage.yaml', 'nodes: [unclosed\n  - : : :\n');
    scratch(corpus, 'wrong.yaml', 'nodes: 3\nworkloads: nope\n');
  },
});
