/** Reads the provider documents in test/fixtures/notices/. */
import { readFileSync } from 'node:fs';

const DIR = new URL('../../fixtures/notices/', import.meta.url);

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, DIR), 'utf8');
}

export function fixture<T = unknown>(name: string): T {
  return JSON.parse(fixtureText(name)) as T;
}
