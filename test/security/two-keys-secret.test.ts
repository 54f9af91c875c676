/**
 * Issue 22, adversarial review round 2 (secrets): two accounts with two different keys, the
 * second revoked (its supplier answers 401 for it). Neither key may appear in what the commands
 * print (status, doctor and doctor --json, balance, catalog --compare, validate --json, submit), in
 * the result and summary files, or in any file the home holds besides the key files themselves.
 * Also a key_file that cannot be read. Real CLI, two real sandboxes. (This held on main.)
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { catalogB } from '../accounts/two-sandboxes.js';

releaseAfterEach();

const KEY_A = 'canary-KEYA-1d2c3b4a5f';
const KEY_B = 'canary-KEYB-9e8d7c6b5a';
const KEY_B_OLD = 'canary-KEYB-revoked-77aa';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('two keys', () => {
  it('no command, result, log or store file shows either key (one of them revoked)', async () => {
    const home = tempHome('adv6-keys-');
    const a = await inProcessSandbox({ apiKey: KEY_A });
    const cat = join(home.dir, 'catalog-b.json');
    writeFileSync(cat, JSON.stringify(catalogB()));
    const b = await inProcessSandbox({ apiKey: KEY_B, catalogFile: cat });
    mkdirSync(join(home.dir, 'keys'), { mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'a.key'), `${KEY_A}\n`, { mode: 0o600 });
    // The second supplier revoked this key (it knows only KEY_B).
    writeFileSync(join(home.dir, 'keys', 'b.key'), `${KEY_B_OLD}\n`, { mode: 0o600 });
    writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/a.key"\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/b.key"\n`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_LOG_LEVEL: 'debug', TOPUP_LOG_FILE: join(home.dir, 'topup.log') });
    const file = join(home.dir, 'k.csv');
    writeFileSync(file, csv([['pid', 'userId', 'zoneId'], ['PUBG-60', '5123456731', ''], ['ML-86', '123456789', '1234']]));
    const outs: string[] = [];
    for (const args of [['doctor'], ['doctor', '--json'], ['balance'], ['balance', '--json'], ['catalog', '--compare'], ['validate', file, '--json'], ['submit', file, '--json'], ['status'], ['status', '--json']]) {
      const r = await runCli(args, env, { timeoutMs: 60_000 });
      outs.push(`$ ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    }
    // A key_file that cannot be read: the error names the file, never a key.
    writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/a.key"\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/missing.key"\n`);
    const bad = await runCli(['doctor'], env, { timeoutMs: 30_000 });
    outs.push(bad.stdout, bad.stderr);
    const all = outs.join('\n');
    for (const k of [KEY_A, KEY_B, KEY_B_OLD]) expect(all.includes(k), `${k} in output`).toBe(false);
    for (const f of filesUnder(home.dir).filter((p) => !p.includes(`${join(home.dir, 'keys')}`) && !p.endsWith('accounts.toml'))) {
      const text = readFileSync(f).toString('latin1');
      for (const k of [KEY_A, KEY_B, KEY_B_OLD]) expect(text.includes(k), `${k} in ${f}`).toBe(false);
    }
  }, 240_000);
});
