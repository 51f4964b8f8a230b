/** The simulator's object store: types, the in-memory implementation, status errors, patches. */
export * from './clock.ts';
export * from './fields.ts';
export { apiVersionOf, type ClosableStore, createStore, type StoreOptions } from './memory-store.ts';
export * from './patch.ts';
export * from './status.ts';
export type * from './types.ts';
