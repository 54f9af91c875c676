/**
 * The store alone, without the API or the sandbox: for commands that must work when the API
 * is down (status), and that must never spend the call budget.
 */
import type { Config } from '../config/config.js';
import { openStore, type Store } from '../store/store.js';

export interface StoreOnly extends Store {
  close(): void;
}

export function openStoreOnly(config: Config): StoreOnly {
  const store = openStore(config.dbPath);
  return { ...store, close: () => store.db.close() };
}
