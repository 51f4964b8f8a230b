/**
 * A parser for the subset of CEL (github.com/google/cel-spec, langdef.md) that CRD validation rules
 * use: literals (int, double, string with `'`/`"` and the common escapes, bool, null, lists, maps),
 * identifiers (`self`, `oldSelf`, macro variables), field selection `a.b`, indexing `a[0]`, `a['k']`,
 * calls `f(x)` and methods `x.f(y)` (the macros `has`, `all`, `exists`, `exists_one`, `map`, `filter`
 * among them), unary `!` and `-`, `* / %`, `+ -`, comparisons and `in`, `&&`, `||` and `? :`.
 * Precedence follows the spec's grammar. An expression outside the subset is a CelSyntaxError, so a
 * CRD carrying such a rule is refused instead of its rule being skipped.
 */

export type Node =
  | { kind: 'literal'; value: unknown }
  | { kind: 'ident'; name: string }
  | { kind: 'select'; target: Node; field: string }
  | { kind: 'index'; target: Node; index: Node }
  | { kind: 'call'; target?: Node; name: string; args: Node[] }
  | { kind: 'unary'; op: '!' | '-'; operand: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node }
  | { kind: 'ternary'; test: Node; then: Node; otherwise: Node }
  | { kind: 'list'; items: Node[] }
  | { kind: 'map'; entries: [Node, Node][] };

export class CelSyntaxError extends Error {
  override name = 'CelSyntaxError';
}

type Token = { type: 'num' | 'str' | 'ident' | 'op'; text: string; value?: unknown };

const OPERATORS = [
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '?',
  ':',
  '.',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
];
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' };

function readString(source: string, start: number): { value: string; end: number } {
  const quote = source[start];
  let value = '';
  let i = start + 1;
  while (i < source.length && source[i] !== quote) {
    if (source[i] === '\\') {
      const escaped = ESCAPES[source[i + 1] ?? ''];
      if (escaped === undefined) throw new CelSyntaxError(`unsupported escape \\${source[i + 1]} at ${i}`);
      value += escaped;
      i += 2;
    } else value += source[i++];
  }
  if (i >= source.length) throw new CelSyntaxError(`unterminated string at ${start}`);
  return { value, end: i + 1 };
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const rest = source.slice(i);
    const space = /^\s+/.exec(rest);
    const number = /^\d+(\.\d+)?([eE][+-]?\d+)?u?/.exec(rest);
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (space) i += space[0].length;
    else if (number) {
      tokens.push({ type: 'num', text: number[0], value: Number(number[0].replace(/u$/, '')) });
      i += number[0].length;
    } else if (word) {
      tokens.push({ type: 'ident', text: word[0] });
      i += word[0].length;
    } else if (rest[0] === '"' || rest[0] === "'") {
      const { value, end } = readString(source, i);
      tokens.push({ type: 'str', text: source.slice(i, end), value });
      i = end;
    } else {
      const op = OPERATORS.find((candidate) => rest.startsWith(candidate));
      if (!op) throw new CelSyntaxError(`unexpected character '${rest[0]}' at ${i}`);
      tokens.push({ type: 'op', text: op });
      i += op.length;
    }
  }
  return tokens;
}

const KEYWORD_LITERALS: Record<string, unknown> = { true: true, false: false, null: null };

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): Node {
    const node = this.#conditional();
    if (this.#at < this.#tokens.length) throw new CelSyntaxError(`unexpected '${this.#tokens[this.#at]?.text}'`);
    return node;
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#at];
  }

  #accept(...texts: string[]): string | undefined {
    const token = this.#peek();
    if (token && (token.type === 'op' || token.text === 'in') && texts.includes(token.text)) {
      this.#at++;
      return token.text;
    }
    return undefined;
  }

  #expect(text: string): void {
    if (!this.#accept(text)) throw new CelSyntaxError(`expected '${text}' but found '${this.#peek()?.text ?? 'end'}'`);
  }

  #conditional(): Node {
    const test = this.#binary(0);
    if (!this.#accept('?')) return test;
    const then = this.#conditional();
    this.#expect(':');
    return { kind: 'ternary', test, then, otherwise: this.#conditional() };
  }

  static readonly LEVELS = [['||'], ['&&'], ['==', '!=', '<', '<=', '>', '>=', 'in'], ['+', '-'], ['*', '/', '%']];

  #binary(level: number): Node {
    const ops = Parser.LEVELS[level];
    if (!ops) return this.#unary();
    let left = this.#binary(level + 1);
    for (let op = this.#accept(...ops); op; op = this.#accept(...ops)) {
      left = { kind: 'binary', op, left, right: this.#binary(level + 1) };
    }
    return left;
  }

  #unary(): Node {
    const op = this.#accept('!', '-');
    if (op === '!' || op === '-') return { kind: 'unary', op, operand: this.#unary() };
    return this.#member(this.#primary());
  }

  #member(start: Node): Node {
    let node = start;
    for (;;) {
      if (this.#accept('.')) {
        const name = this.#identifier();
        node = this.#accept('(')
          ? { kind: 'call', target: node, name, args: this.#args(')') }
          : { kind: 'select', target: node, field: name };
      } else if (this.#accept('[')) {
        node = { kind: 'index', target: node, index: this.#conditional() };
        this.#expect(']');
      } else return node;
    }
  }

  #identifier(): string {
    const token = this.#peek();
    if (token?.type !== 'ident') throw new CelSyntaxError(`expected an identifier but found '${token?.text ?? 'end'}'`);
    this.#at++;
    return token.text;
  }

  #args(close: string): Node[] {
    const args: Node[] = [];
    if (this.#accept(close)) return args;
    do args.push(this.#conditional());
    while (this.#accept(','));
    this.#expect(close);
    return args;
  }

  #primary(): Node {
    const token = this.#peek();
    if (!token) throw new CelSyntaxError('unexpected end of expression');
    this.#at++;
    if (token.type === 'num' || token.type === 'str') return { kind: 'literal', value: token.value };
    if (token.type === 'ident') {
      if (Object.hasOwn(KEYWORD_LITERALS, token.text)) return { kind: 'literal', value: KEYWORD_LITERALS[token.text] };
      if (this.#accept('(')) return { kind: 'call', name: token.text, args: this.#args(')') };
      return { kind: 'ident', name: token.text };
    }
    return this.#grouped(token.text);
  }

  #grouped(open: string): Node {
    if (open === '(') {
      const inner = this.#conditional();
      this.#expect(')');
      return inner;
    }
    if (open === '[') return { kind: 'list', items: this.#args(']') };
    if (open === '{') return { kind: 'map', entries: this.#entries() };
    throw new CelSyntaxError(`unexpected '${open}'`);
  }

  #entries(): [Node, Node][] {
    const entries: [Node, Node][] = [];
    if (this.#accept('}')) return entries;
    do {
      const key = this.#conditional();
      this.#expect(':');
      entries.push([key, this.#conditional()]);
    } while (this.#accept(','));
    this.#expect('}');
    return entries;
  }
}

/** Parses a CEL expression of the supported subset; throws CelSyntaxError naming the problem. */
export function parseCel(source: string): Node {
  return new Parser(tokenize(source)).parse();
}

/** Whether the expression refers to `name` as a variable (a transition rule refers to `oldSelf`). */
export function refersTo(node: Node, name: string): boolean {
  switch (node.kind) {
    case 'ident':
      return node.name === name;
    case 'literal':
      return false;
    case 'select':
      return refersTo(node.target, name);
    case 'index':
      return refersTo(node.target, name) || refersTo(node.index, name);
    case 'call':
      return (node.target ? refersTo(node.target, name) : false) || node.args.some((arg) => refersTo(arg, name));
    case 'unary':
      return refersTo(node.operand, name);
    case 'binary':
      return refersTo(node.left, name) || refersTo(node.right, name);
    case 'ternary':
      return [node.test, node.then, node.otherwise].some((each) => refersTo(each, name));
    case 'list':
      return node.items.some((item) => refersTo(item, name));
    case 'map':
      return node.entries.some(([key, value]) => refersTo(key, name) || refersTo(value, name));
  }
}
