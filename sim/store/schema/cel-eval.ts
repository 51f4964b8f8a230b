/**
 * Evaluates a parsed CEL expression (cel-parse.ts) over JSON values. Objects are CEL maps, arrays lists;
 * numbers stand for int and double alike (a schema's `integer` fields hold whole numbers). Functions:
 * `size`, `has`, `all`, `exists`, `exists_one`, `map`, `filter`, `startsWith`, `endsWith`, `contains`,
 * `matches`, `int`, `double`, `string`. Selecting a missing field is the error CEL reports (`no such key:
 * x`); `&&` and `||` absorb an error when the other side decides, as CEL's commutative logic does.
 */
import type { Node } from './cel-parse.ts';
import { isPlainObject } from './types.ts';

export class CelEvalError extends Error {
  override name = 'CelEvalError';
}

type Scope = ReadonlyMap<string, unknown>;

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

function noOverload(name: string, ...args: unknown[]): CelEvalError {
  const types = args.map((arg) => (Array.isArray(arg) ? 'list' : isPlainObject(arg) ? 'map' : typeof arg));
  return new CelEvalError(`found no matching overload for '${name}' applied to '(${types.join(', ')})'`);
}

function select(target: unknown, field: string): unknown {
  if (!isPlainObject(target)) throw noOverload(`.${field}`, target);
  if (!Object.hasOwn(target, field)) throw new CelEvalError(`no such key: ${field}`);
  return target[field];
}

function index(target: unknown, key: unknown): unknown {
  if (Array.isArray(target) && typeof key === 'number') {
    if (key < 0 || key >= target.length) throw new CelEvalError(`index out of bounds: ${key}`);
    return target[key];
  }
  if (isPlainObject(target) && typeof key === 'string') return select(target, key);
  throw noOverload('_[_]', target, key);
}

function size(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (isPlainObject(value)) return Object.keys(value).length;
  throw noOverload('size', value);
}

function compare(op: string, left: unknown, right: unknown): boolean {
  const comparable =
    (typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string');
  if (!comparable) throw noOverload(op, left, right);
  const [a, b] = [left as number | string, right as number | string];
  if (op === '<') return a < b;
  if (op === '<=') return a <= b;
  if (op === '>') return a > b;
  return a >= b;
}

const NUMERIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  // int / int truncates in CEL; a double on either side divides exactly.
  '/': (a, b) => (Number.isInteger(a) && Number.isInteger(b) ? Math.trunc(a / b) : a / b),
  '%': (a, b) => a % b,
};

function arithmetic(op: string, left: unknown, right: unknown): unknown {
  if (op === '+' && typeof left === 'string' && typeof right === 'string') return left + right;
  if (op === '+' && Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
  const apply = NUMERIC[op];
  if (!apply || typeof left !== 'number' || typeof right !== 'number') throw noOverload(op, left, right);
  if ((op === '/' || op === '%') && right === 0) {
    throw new CelEvalError(op === '/' ? 'division by zero' : 'modulus by zero');
  }
  return apply(left, right);
}

function contains(container: unknown, item: unknown): boolean {
  if (Array.isArray(container)) return container.some((each) => deepEqual(each, item));
  if (isPlainObject(container) && typeof item === 'string') return Object.hasOwn(container, item);
  throw noOverload('@in', item, container);
}

function asBool(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw noOverload(what, value);
  return value;
}

class Evaluator {
  evaluate(node: Node, scope: Scope): unknown {
    switch (node.kind) {
      case 'literal':
        return node.value;
      case 'ident':
        if (!scope.has(node.name)) throw new CelEvalError(`undeclared reference to '${node.name}'`);
        return scope.get(node.name);
      case 'select':
        return select(this.evaluate(node.target, scope), node.field);
      case 'index':
        return index(this.evaluate(node.target, scope), this.evaluate(node.index, scope));
      case 'list':
        return node.items.map((item) => this.evaluate(item, scope));
      case 'map':
        return Object.fromEntries(node.entries.map(([k, v]) => [this.evaluate(k, scope), this.evaluate(v, scope)]));
      case 'ternary':
        return asBool(this.evaluate(node.test, scope), '_?_:_')
          ? this.evaluate(node.then, scope)
          : this.evaluate(node.otherwise, scope);
      case 'unary':
        return this.#unary(node.op, this.evaluate(node.operand, scope));
      case 'binary':
        return this.#binary(node, scope);
      case 'call':
        return this.#call(node, scope);
    }
  }

  #unary(op: '!' | '-', value: unknown): unknown {
    if (op === '!') return !asBool(value, '!_');
    if (typeof value !== 'number') throw noOverload('-_', value);
    return -value;
  }

  /** `&&`/`||`: the side that decides wins over an error on the other side. */
  #logical(op: '&&' | '||', left: Node, right: Node, scope: Scope): boolean {
    const decisive = op === '||';
    const attempt = (node: Node): boolean | CelEvalError => {
      try {
        return asBool(this.evaluate(node, scope), op);
      } catch (error) {
        if (error instanceof CelEvalError) return error;
        throw error;
      }
    };
    const a = attempt(left);
    if (a === decisive) return decisive;
    const b = attempt(right);
    if (b === decisive) return decisive;
    if (a instanceof CelEvalError) throw a;
    if (b instanceof CelEvalError) throw b;
    return !decisive;
  }

  #binary(node: Extract<Node, { kind: 'binary' }>, scope: Scope): unknown {
    if (node.op === '&&' || node.op === '||') return this.#logical(node.op, node.left, node.right, scope);
    const left = this.evaluate(node.left, scope);
    const right = this.evaluate(node.right, scope);
    if (node.op === '==') return deepEqual(left, right);
    if (node.op === '!=') return !deepEqual(left, right);
    if (node.op === 'in') return contains(right, left);
    if (['<', '<=', '>', '>='].includes(node.op)) return compare(node.op, left, right);
    return arithmetic(node.op, left, right);
  }

  #call(node: Extract<Node, { kind: 'call' }>, scope: Scope): unknown {
    if (node.name === 'has' && !node.target) return this.#has(node.args, scope);
    if (node.target && ['all', 'exists', 'exists_one', 'map', 'filter'].includes(node.name)) {
      return this.#comprehension(node.name, this.evaluate(node.target, scope), node.args, scope);
    }
    const target = node.target ? this.evaluate(node.target, scope) : undefined;
    const args = node.args.map((arg) => this.evaluate(arg, scope));
    return callFunction(node.name, node.target ? [target, ...args] : args);
  }

  #has(args: Node[], scope: Scope): boolean {
    const [arg] = args;
    if (args.length !== 1 || arg?.kind !== 'select') throw new CelEvalError('invalid argument to has() macro');
    const target = this.evaluate(arg.target, scope);
    if (!isPlainObject(target)) throw noOverload('has', target);
    return Object.hasOwn(target, arg.field);
  }

  #comprehension(name: string, range: unknown, args: Node[], scope: Scope): unknown {
    const [variable, body] = args;
    if (args.length !== 2 || variable?.kind !== 'ident' || !body)
      throw new CelEvalError(`invalid arguments to ${name}()`);
    const items = Array.isArray(range) ? range : isPlainObject(range) ? Object.keys(range) : undefined;
    if (!items) throw noOverload(name, range);
    const run = (item: unknown): unknown => this.evaluate(body, new Map([...scope, [variable.name, item]]));
    if (name === 'map') return items.map(run);
    if (name === 'filter') return items.filter((item) => asBool(run(item), name));
    const passed = items.filter((item) => asBool(run(item), name)).length;
    if (name === 'all') return passed === items.length;
    if (name === 'exists') return passed > 0;
    return passed === 1;
  }
}

const STRING_METHODS: Record<string, (s: string, arg: string) => boolean> = {
  startsWith: (s, arg) => s.startsWith(arg),
  endsWith: (s, arg) => s.endsWith(arg),
  contains: (s, arg) => s.includes(arg),
  matches: (s, arg) => new RegExp(arg, 'u').test(s),
};

function callFunction(name: string, args: unknown[]): unknown {
  const [first, second] = args;
  const method = STRING_METHODS[name];
  if (method && args.length === 2 && typeof first === 'string' && typeof second === 'string')
    return method(first, second);
  if (name === 'size' && args.length === 1) return size(first);
  if (name === 'int' && args.length === 1 && (typeof first === 'number' || typeof first === 'string')) {
    const value = Math.trunc(Number(first));
    if (Number.isNaN(value)) throw new CelEvalError(`cannot convert ${JSON.stringify(first)} to int`);
    return value;
  }
  if (name === 'double' && args.length === 1 && typeof first === 'number') return first;
  if (name === 'string' && args.length === 1 && ['string', 'number', 'boolean'].includes(typeof first))
    return String(first);
  throw noOverload(name, ...args);
}

/** Evaluates `node` with the variables in `scope` (`self`, `oldSelf`); throws CelEvalError. */
export function evaluateCel(node: Node, scope: Readonly<Record<string, unknown>>): unknown {
  return new Evaluator().evaluate(node, new Map(Object.entries(scope)));
}
