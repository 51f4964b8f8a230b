/**
 * EventBridge `cidr` matching for IPv4 (`10.0.0.0/24`) and IPv6 (`2001:db8::/32`). An address with
 * no prefix length stands for itself. The event's value must be a string holding an address of the
 * same family; anything else does not match.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { PatternProblem } from './problem.ts';

interface Address {
  readonly bits: bigint;
  readonly width: 32 | 128;
}

function ipv4Bits(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

/** Expands `::` and a trailing dotted IPv4 part into eight 16-bit groups. */
function ipv6Groups(text: string): number[] {
  let body = text.split('%')[0] as string;
  const dotted = body.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const v4 = ipv4Bits(dotted[1] as string);
    body = `${body.slice(0, -(dotted[1] as string).length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = body.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => Number.parseInt(group, 16));
}

/** Parses an address, or undefined when `text` is not one. */
export function parseAddress(text: string): Address | undefined {
  if (isIPv4(text)) return { bits: ipv4Bits(text), width: 32 };
  if (isIPv6(text)) {
    return { bits: ipv6Groups(text).reduce((acc, group) => (acc << 16n) | BigInt(group), 0n), width: 128 };
  }
  return undefined;
}

function maskOf(width: number, prefixLength: number): bigint {
  const all = (1n << BigInt(width)) - 1n;
  return all ^ ((1n << BigInt(width - prefixLength)) - 1n);
}

function readPrefixLength(text: string | undefined, width: number, cidr: string): number {
  if (text === undefined) return width;
  if (!/^\d{1,3}$/.test(text) || Number(text) > width) {
    throw new PatternProblem(`"${cidr}": the prefix length must be a whole number from 0 to ${width}`);
  }
  return Number(text);
}

/** Compiles a `cidr` operand to a predicate on strings. */
export function compileCidr(operand: unknown): (text: string) => boolean {
  if (typeof operand !== 'string') throw new PatternProblem('must be a string such as "10.0.0.0/24"');
  const [addressText = '', lengthText, extra] = operand.split('/');
  const network = parseAddress(addressText);
  if (!network || extra !== undefined) throw new PatternProblem(`"${operand}" is not an IPv4 or IPv6 CIDR block`);
  const mask = maskOf(network.width, readPrefixLength(lengthText, network.width, operand));
  const prefix = network.bits & mask;
  return (text) => {
    const address = parseAddress(text);
    return address !== undefined && address.width === network.width && (address.bits & mask) === prefix;
  };
}
