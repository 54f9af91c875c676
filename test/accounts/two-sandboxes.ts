/**
 * Two real in-process sandboxes as two accounts of one home (as test/accounts/two-accounts.test.ts
 * builds them): `main` is the default catalog; `second` sells the same packs under other pids
 * ("B-" + pid) 10 % cheaper, and no Mobile Legends. Each sandbox numbers its orders from
 * ORD1000001, as two independent suppliers would.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { cliEnv, inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/index.js';

type Catalog = ReturnType<typeof defaultCatalog>;

const homes: TempHome[] = [];
const sandboxes: RunningSandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const h of homes.splice(0)) h.remove();
});

/** The default catalog with other pids ("B-" + pid), 10 % cheaper, no Mobile Legends. */
export function catalogB(): Catalog {
  const c = defaultCatalog();
  return {
    services: c.services.filter((s) => s.slug !== 'mobilelegends'),
    products: c.products.filter((p) => p.slug !== 'mobilelegends').map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 })),
  } as Catalog;
}

export function writeAccounts(home: TempHome, a: { url: string }, b: { url: string }, extra = '', names: [string, string] = ['main', 'second']): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'a.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'keys', 'b.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(
    join(home.dir, 'accounts.toml'),
    `${extra}\n[[account]]\nname = "${names[0]}"\nurl = "${a.url}"\nkey_file = "keys/a.key"\n\n[[account]]\nname = "${names[1]}"\nurl = "${b.url}"\nkey_file = "keys/b.key"\n`,
  );
}

export async function twoAccounts(opts: { extra?: string; catalogB?: Catalog; a?: Partial<SandboxOptions>; b?: Partial<SandboxOptions>; env?: NodeJS.ProcessEnv } = {}) {
  const home = tempHome('adv5-');
  homes.push(home);
  const a = await inProcessSandbox(opts.a ?? {});
  sandboxes.push(a);
  const file = join(home.dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify(opts.catalogB ?? catalogB()));
  const b = await inProcessSandbox({ catalogFile: file, ...(opts.b ?? {}) });
  sandboxes.push(b);
  writeAccounts(home, a, b, opts.extra ?? '');
  const env = cliEnv(home, null, { TOPUP_API_KEY: '', ...(opts.env ?? {}) });
  return { home, a, b, env };
}

export const trxidsOf = (sb: RunningSandbox): string[] => sb.admin.ledger().orders.map((o) => String(o.trxid));
export const ordersOf = (sb: RunningSandbox) => sb.admin.ledger().orders;
