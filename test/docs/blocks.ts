/**
 * The shell blocks of the user documentation (README.md and docs/*.md) and how each is checked.
 *
 * Every ```sh / ```bash / ```console / ```shell block must be preceded (blank lines aside) by a marker
 * `<!-- doc-test: KIND[ ARG][; REASON] -->` that says how the doc test runs it:
 *  - `cluster`: on a fresh simulated cluster with drainbridge installed (`kubectl apply -k deploy/base`);
 *  - `bare-cluster`: on a fresh simulated cluster without it;
 *  - `service /READY/`: as `cluster`, but the block's long-running command (`drainbridge run|sim|forwarder`)
 *    is started, its READY line awaited, the lines after it run, and then it is stopped (SIGINT);
 *  - `ci`, `aws`, `lab`, `image`, `session`: run elsewhere or not runnable here; REASON says where or why.
 * A block without a marker, or with a marker this file does not know, is an error (the doc test fails).
 * Output blocks use a fence without a language (or ```text / ```json) and are not commands.
 */

export const SHELL_LANGUAGES: ReadonlySet<string> = new Set(['sh', 'bash', 'console', 'shell']);
export const RUN_KINDS = ['cluster', 'bare-cluster', 'service'] as const;
export const ELSEWHERE_KINDS = ['ci', 'aws', 'lab', 'image', 'session'] as const;
export type BlockKind = (typeof RUN_KINDS)[number] | (typeof ELSEWHERE_KINDS)[number];

export interface ShellCommand {
  /** The command as bash runs it (continuation lines and heredoc bodies kept, trailing comment dropped). */
  readonly text: string;
  /** The status the documentation states for it (`# exit N`), else 0. */
  readonly exit: number;
  /** The line of the block it starts on, 1-based in the file. */
  readonly line: number;
}

export interface ShellBlock {
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  readonly body: string;
  /** The marker's kind, or an error saying why there is none. */
  readonly kind: BlockKind | undefined;
  /** `service`: the ready pattern; elsewhere kinds: the reason. */
  readonly arg: string;
  readonly reason: string;
  readonly problem?: string;
}

const MARKER = /^<!--\s*doc-test:\s*(.*?)\s*-->$/;

function isKind(word: string): word is BlockKind {
  return (RUN_KINDS as readonly string[]).includes(word) || (ELSEWHERE_KINDS as readonly string[]).includes(word);
}

/** Reads a marker's text: `KIND[ ARG][; REASON]`. */
function parseMarker(text: string): Pick<ShellBlock, 'kind' | 'arg' | 'reason' | 'problem'> {
  const [head = '', ...rest] = text.split(';');
  const reason = rest.join(';').trim();
  const [word = '', ...args] = head.trim().split(/\s+/);
  const arg = args.join(' ');
  if (!isKind(word)) return { kind: undefined, arg, reason, problem: `unknown doc-test kind "${word}"` };
  if (word === 'service' && !/^\/.+\/$/.test(arg)) {
    return { kind: word, arg, reason, problem: 'a service block needs its ready line as /PATTERN/' };
  }
  if ((ELSEWHERE_KINDS as readonly string[]).includes(word) && reason.length < 10) {
    return { kind: word, arg, reason, problem: `a "${word}" block must say where it is checked, or why it is not` };
  }
  return { kind: word, arg, reason };
}

/** The marker line before line index `at` (blank lines skipped), if any. */
function markerBefore(lines: readonly string[], at: number): string | undefined {
  for (let i = at - 1; i >= 0; i--) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    return MARKER.exec(line)?.[1];
  }
  return undefined;
}

/** Every shell block of a markdown file, classified. */
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && /^\s*```\s*$/.test(line));
    const close = end < 0 ? lines.length : end;
    const language = open[1] ?? '';
    if (SHELL_LANGUAGES.has(language)) {
      const body = lines.slice(i + 1, close).join('\n');
      const marker = markerBefore(lines, i);
      const classified =
        marker === undefined
          ? { kind: undefined, arg: '', reason: '', problem: 'no <!-- doc-test: KIND --> marker before the block' }
          : parseMarker(marker);
      blocks.push({ file, line: i + 1, body, ...classified });
    }
    i = close;
  }
  return blocks;
}

/** The heredoc delimiter a line opens (`<<'YAML'`, `<<EOF`), if any. */
function heredocOpened(line: string): string | undefined {
  return /<<-?\s*['"]?(\w+)['"]?/.exec(line)?.[1];
}

/** A command line's `# exit N` comment, else 0. */
function statedExit(line: string): number {
  return Number(/#\s*exit (\d+)/.exec(line)?.[1] ?? 0);
}

/** Drops a trailing ` # comment` (not inside quotes: the documentation's comments follow two spaces). */
function withoutComment(line: string): string {
  return line.replace(/\s{2,}#.*$|\s#\s.*$/, '').trimEnd();
}

/** Whether a command goes on to the next line: a trailing backslash, or a single quote still open. */
function continues(parts: readonly string[]): boolean {
  const quotes = parts.join('\n').split("'").length - 1;
  return (parts.at(-1) ?? '').endsWith('\\') || quotes % 2 === 1;
}

/** The commands of a block, in order: continuation lines joined, heredocs kept whole, comment lines dropped. */
export function commandsOf(block: Pick<ShellBlock, 'body' | 'line'>): ShellCommand[] {
  const lines = block.body.split('\n');
  const commands: ShellCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i] ?? '';
    if (first.trim() === '' || first.trim().startsWith('#')) continue;
    const start = i;
    const parts = [withoutComment(first)];
    const exit = statedExit(first);
    const heredoc = heredocOpened(first);
    if (heredoc) {
      while (i + 1 < lines.length && (lines[i] ?? '').trim() !== heredoc) parts.push(lines[++i] ?? '');
    } else {
      while (continues(parts) && i + 1 < lines.length) parts.push(withoutComment(lines[++i] ?? ''));
    }
    commands.push({ text: parts.join('\n'), exit, line: block.line + 1 + start });
  }
  return commands;
}
