/**
 * A home with two supplier accounts (accounts.toml), each a real in-process sandbox: `main` sells
 * the default catalog, `second` a few of its packs under other pids and prices (one cheaper, one
 * dearer, a card with little stock) and lacks every other game. For the tests of what the views
 * show per account.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { cliEnv, inProcessSandbox, ROOT, tempHome, TEST_KEY, type TempHome } from './harness.js';

export const SECOND_CATALOG = join(ROOT, 'test', 'fixtures', 'accounts', 'second-catalog.json');

export interface TwoAccounts {
  home: TempHome;
  main: RunningSandbox;
  second: RunningSandbox;
  /** The CLI's environment: the accounts come from the file alone (TOPUP_API_KEY beside it is refused). */
  env: NodeJS.ProcessEnv;
}

export async function twoAccountHome(opts: { routing?: string; mainBalanceUsd?: number; secondBalanceUsd?: number; extra?: string } = {}): Promise<TwoAccounts> {
  const home = tempHome('topup-accounts-');
  const main = await inProcessSandbox({ balanceUsd: opts.mainBalanceUsd ?? 1000 });
  const second = await inProcessSandbox({ balanceUsd: opts.secondBalanceUsd ?? 1000, catalogFile: SECOND_CATALOG });
  mkdirSync(join(home.dir, 'keys'), { mode: 0o700 });
  for (const name of ['main', 'second']) writeFileSync(join(home.dir, 'keys', `${name}.key`), `${TEST_KEY}\n`, { mode: 0o600 });
  writeFileSync(
    join(home.dir, 'accounts.toml'),
    [
      `routing = "${opts.routing ?? 'cheapest'}"`,
      '[[account]]', 'name = "main"', `url = "${main.url}"`, 'key_file = "keys/main.key"',
      '[[account]]', 'name = "second"', `url = "${second.url}"`, 'key_file = "keys/second.key"',
      opts.extra ?? '',
    ].join('\n'),
  );
  return { home, main, second, env: cliEnv(home, null, { TOPUP_API_KEY: '' }) };
}

/** The same home's config for an in-process runtime (loadConfig's environment). */
export function twoAccountConfigEnv(t: TwoAccounts): Record<string, string> {
  return { TOPUP_HOME: t.home.dir, TOPUP_API_KEY: '' };
}
