/**
 * `drainbridge completion bash|zsh`: a shell completion script, generated from the commands' declared
 * flags (so it never lists a flag a command does not take): commands, flags, flag values (levels,
 * formats, scenarios, files) and node names (from `kubectl get nodes`, with the line's --kubeconfig).
 */
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { LOG_FLAGS } from '../common-flags.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, parseCommandLine } from '../flags.ts';
import { didYouMean } from '../suggest.ts';

const SHELLS = ['bash', 'zsh'] as const;
type Shell = (typeof SHELLS)[number];

interface CommandShape {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly FlagSpec[];
  readonly takesNode: boolean;
}

function shapes(commands: readonly Command[]): CommandShape[] {
  return commands.map((c) => ({
    name: c.name,
    summary: c.summary,
    flags: [...(c.flags ?? []), ...LOG_FLAGS],
    takesNode: (c.operands ?? []).includes('NODE'),
  }));
}

/** What a value flag completes to: a word list, files, or nothing (free text). */
function valueKind(flag: FlagSpec): { words: readonly string[] } | 'files' | 'none' {
  if (flag.choices) return { words: flag.choices };
  if (flag.value === 'FILE' || flag.value === 'NAME|FILE') return 'files';
  return 'none';
}

const NODES_BASH = `_drainbridge_nodes() {
  command -v kubectl >/dev/null 2>&1 || return 0
  local -a args=()
  local i
  for ((i = 1; i < \${#COMP_WORDS[@]} - 1; i++)); do
    case "\${COMP_WORDS[i]}" in
      --kubeconfig|--context) args+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i+1]}") ;;
      --kubeconfig=*|--context=*) args+=("\${COMP_WORDS[i]}") ;;
    esac
  done
  kubectl "\${args[@]}" get nodes --request-timeout=3s -o 'jsonpath={.items[*].metadata.name}' 2>/dev/null
}`;

/** How a flag is written after the command: `--output|-o` for one with a short alias. */
function bashPattern(flag: FlagSpec): string {
  return flag.short ? `--${flag.name}|-${flag.short}` : `--${flag.name}`;
}

/**
 * The values of one command's value flags, keyed by what precedes the word: per command, since two
 * commands may give one flag name different values (`--output`: evacuate's modes, status's formats).
 */
function bashValueCases(command: CommandShape, scenarios: readonly string[]): string {
  const lines: string[] = [];
  for (const flag of command.flags) {
    if (flag.kind !== 'value') continue;
    const kind = valueKind(flag);
    const words = flag.name === 'scenario' ? scenarios : typeof kind === 'object' ? kind.words : [];
    const files = kind === 'files' ? ' -f' : '';
    const reply =
      words.length > 0 || files ? `COMPREPLY=($(compgen${files} -W "${words.join(' ')}" -- "$cur"))` : 'COMPREPLY=()';
    lines.push(`        ${bashPattern(flag)}) ${reply}; return ;;`);
  }
  return `    ${command.name})\n      case "$prev" in\n${lines.join('\n')}\n      esac ;;`;
}

export function bashScript(commands: readonly Command[], scenarios: readonly string[]): string {
  const list = shapes(commands);
  const flagCases = list
    .map((c) => {
      const words = c.flags.flatMap((f) => (f.short ? [`--${f.name}`, `-${f.short}`] : [`--${f.name}`]));
      return `    ${c.name}) flags="${words.join(' ')}" ;;`;
    })
    .join('\n');
  const nodeCommands = list.filter((c) => c.takesNode).map((c) => c.name);
  return `# bash completion for drainbridge. Load it with:  source <(drainbridge completion bash)
${NODES_BASH}

_drainbridge() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ "$prev" == "=" ]]; then prev="\${COMP_WORDS[COMP_CWORD-2]}"; fi
  if [[ "$cur" == "=" ]]; then cur=""; fi
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "${list.map((c) => c.name).join(' ')} help version --version --help" -- "$cur"))
    return
  fi
  local cmd="\${COMP_WORDS[1]}" flags=""
  case "$cmd" in
${flagCases}
  esac
  case "$cmd" in
${list.map((c) => bashValueCases(c, scenarios)).join('\n')}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
    return
  fi
  case "$cmd" in
    ${nodeCommands.join('|') || '__none__'}) COMPREPLY=($(compgen -W "$(_drainbridge_nodes)" -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W "${SHELLS.join(' ')}" -- "$cur")) ;;
  esac
}
complete -F _drainbridge drainbridge
`;
}

/** Text safe inside a zsh _arguments description: no brackets or colons. */
function zshText(text: string): string {
  return text.replace(/[[\]]/g, '').replace(/:/g, ' -').replace(/'/g, '');
}

function zshFlag(flag: FlagSpec, scenarios: readonly string[]): string {
  const help = zshText(flag.help ?? '');
  if (flag.kind === 'switch') {
    return flag.short ? `'--${flag.name}[${help}]' \\\n        '-${flag.short}[${help}]'` : `'--${flag.name}[${help}]'`;
  }
  const long = zshValueFlag(flag, help, scenarios);
  if (!flag.short) return long;
  // The short alias takes its value as the next word (`-o json`), as kubectl's does.
  const kind = valueKind(flag);
  const words = typeof kind === 'object' ? kind.words : [];
  const action = words.length > 0 ? `(${words.join(' ')})` : kind === 'files' ? '_files' : ' ';
  return `${long} \\\n        '-${flag.short}[${help}]:${zshText(flag.value ?? 'value')}:${action}'`;
}

function zshValueFlag(flag: FlagSpec, help: string, scenarios: readonly string[]): string {
  const kind = valueKind(flag);
  const words = flag.name === 'scenario' ? scenarios : typeof kind === 'object' ? kind.words : [];
  const action = words.length > 0 ? `(${words.join(' ')})` : kind === 'files' ? '_files' : ' ';
  const fileToo = flag.name === 'scenario' ? `{_files; compadd ${scenarios.join(' ')}}` : action;
  return `'--${flag.name}=[${help}]:${zshText(flag.value ?? 'value')}:${fileToo}'`;
}

export function zshScript(commands: readonly Command[], scenarios: readonly string[]): string {
  const list = shapes(commands);
  const described = [
    ...list.map((c) => `    '${c.name}:${zshText(c.summary)}'`),
    "    'version:print the version'",
  ].join('\n');
  const cases = list
    .map((c) => {
      const specs = c.flags.map((f) => `        ${zshFlag(f, scenarios)}`);
      if (c.takesNode) specs.push("        '1:node:_drainbridge_nodes'");
      if (c.name === 'completion') specs.push(`        '1:shell:(${SHELLS.join(' ')})'`);
      return `    ${c.name})\n      _arguments -s \\\n${specs.join(' \\\n')}\n      ;;`;
    })
    .join('\n');
  return `#compdef drainbridge
# zsh completion for drainbridge. Load it with:  source <(drainbridge completion zsh)
# (or save it as _drainbridge in a directory on $fpath)

_drainbridge_nodes() {
  (( $+commands[kubectl] )) || return 0
  local -a args nodes
  local i
  for (( i = 2; i < CURRENT; i++ )); do
    case $words[i] in
      --kubeconfig|--context) args+=($words[i] $words[i+1]) ;;
      --kubeconfig=*|--context=*) args+=($words[i]) ;;
    esac
  done
  nodes=(\${(z)"$(kubectl $args get nodes --request-timeout=3s -o 'jsonpath={.items[*].metadata.name}' 2>/dev/null)"})
  compadd -a nodes
}

_drainbridge() {
  local -a subcommands
  subcommands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'drainbridge command' subcommands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases}
  esac
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _drainbridge "$@"
else
  compdef _drainbridge drainbridge
fi
`;
}

/** The command, over the list of commands it completes (its own entry included). */
export function completionCommandFor(
  commands: () => Promise<readonly Command[]>,
  scenarios: () => readonly string[],
): Command {
  return {
    name: 'completion',
    summary: 'print a shell completion script: drainbridge completion bash|zsh',
    usage: [
      'Usage: drainbridge completion bash|zsh',
      '',
      'Prints a completion script for the shell: commands, flags, flag values and node names (from',
      '`kubectl get nodes`, honouring --kubeconfig/--context on the line). Load it for this shell with',
      '  source <(drainbridge completion bash)      # or zsh',
      'or install it: bash: save it to /etc/bash_completion.d/drainbridge; zsh: save it as _drainbridge',
      'in a directory on $fpath.',
    ].join('\n'),
    flags: [],
    operands: ['SHELL'],
    exits: ['ok', 'usage'],
    async run(argv, context: CommandContext = processContext()) {
      const parsed = parseCommandLine(argv, []);
      const [shell = ''] = expectPositionals(parsed, ['SHELL']);
      if (!(SHELLS as readonly string[]).includes(shell)) {
        throw new UsageError(`SHELL must be one of ${SHELLS.join(', ')}, not "${shell}"${didYouMean(shell, SHELLS)}`);
      }
      const all = await commands();
      const script = (shell as Shell) === 'bash' ? bashScript(all, scenarios()) : zshScript(all, scenarios());
      context.out(script.trimEnd());
      return EXIT.ok;
    },
  };
}
