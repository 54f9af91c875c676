/**
 * `topup token create|list|revoke`: the order API's bearer tokens (docs/order-api.md). Each has
 * scopes of its own (orders:write, orders:read, codes:read, players:check) and a name, so a shop's token can
 * place and read orders without reading codes, and a leaked one is revoked alone. The store holds
 * only each token's SHA-256: `create` prints the token once, `list` never can.
 *
 * These read and write the store only (no API call, no daemon needed); a running daemon sees a new
 * token, and stops taking a revoked one, at its next request (it looks tokens up every time).
 */
import type { Command } from 'commander';
import { systemClock } from '../kernel/clock.js';
import { NotFoundError } from '../kernel/errors.js';
import { SCOPES } from '../orders/types.js';
import { parseScopes, TokenStore } from '../orderapi/tokens.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';
import { addFormatOptions, formatOf, printList, when } from './output.js';
import { CONSOLE_URL_KEY } from '../console/server.js';

export function registerToken(program: Command): void {
  const token = program.command('token').description('Bearer tokens of the order API (/api/v1): create, list, revoke');

  token
    .command('create')
    .description('Make a token with these scopes; it is printed once (only its hash is stored)')
    .requiredOption('--scope <scopes>', `comma-separated: ${SCOPES.join(', ')}`)
    .option('--name <name>', 'who or what uses it (shown by list, logs)', 'api')
    .option('--json', 'print JSON (for scripts)')
    .action((opts: { scope: string; name: string; json?: boolean }, cmd: Command) => {
      const scopes = parseScopes(opts.scope);
      const config = commandConfig(cmd, { requireKey: false });
      const store = openStoreOnly(config);
      try {
        const { token: value, info } = new TokenStore(store.db, systemClock, null).create(opts.name, scopes);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ id: info.id, name: info.name, scopes: info.scopes, token: value }, null, 2)}\n`);
          return;
        }
        // TOPUP_CONSOLE is often set only in the daemon's environment, so this command's own value
        // (127.0.0.1:8377 by default) may not be the daemon's: the address the daemon recorded when
        // its console last listened comes first; else this command's, said to be a guess.
        const recorded = store.meta.get(CONSOLE_URL_KEY)?.replace(/\/$/, '');
        const mine = config.console && config.console.port > 0
          ? `http://${config.console.host.includes(':') ? `[${config.console.host}]` : config.console.host}:${config.console.port}`
          : 'http://127.0.0.1:8377';
        const where = recorded ?? mine;
        const note = recorded
          ? `(${where} is where the daemon's console last listened; TOPUP_CONSOLE sets it.)\n`
          : `(${where} is TOPUP_CONSOLE as this command sees it, 127.0.0.1:8377 by default; the daemon's log names its own address in a "console: open …" line.)\n`;
        process.stdout.write(
          `${value}\n\n` +
            `Token ${info.id} (${info.name}), scopes ${info.scopes.join(', ')}. It is shown only now: keep it in your shop's secrets.\n` +
            `Use it as:  curl -H "Authorization: Bearer ${value}" ${where}/api/v1/orders\n` +
            note +
            `Revoke it:  topup token revoke ${info.id}\n`,
        );
      } finally {
        store.close();
      }
    });

  addFormatOptions(
    token.command('list').description('The tokens made with create, with scopes and last use (never the token itself)').option('--all', 'revoked tokens too'),
  ).action((opts: { all?: boolean; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const config = commandConfig(cmd, { requireKey: false });
    const store = openStoreOnly(config);
    try {
      const rows = new TokenStore(store.db, systemClock, null).list().filter((t) => opts.all || t.revokedAt === null);
      printList(format, rows, [
        { title: 'id', get: (t) => t.id },
        { title: 'name', get: (t) => t.name },
        { title: 'scopes', get: (t) => t.scopes.join(',') },
        { title: 'created UTC', get: (t) => when(t.createdAt) },
        { title: 'last used UTC', get: (t) => when(t.lastUsedAt) },
        ...(opts.all ? [{ title: 'revoked UTC', get: (t: { revokedAt: number | null }) => when(t.revokedAt) }] : []),
      ], rows.map((t) => ({ id: t.id, name: t.name, scopes: t.scopes, createdAt: new Date(t.createdAt).toISOString(), lastUsedAt: t.lastUsedAt === null ? null : new Date(t.lastUsedAt).toISOString(), revokedAt: t.revokedAt === null ? null : new Date(t.revokedAt).toISOString() })));
      if (format === 'table' && config.orderApi.token) process.stderr.write('TOPUP_ORDER_API_TOKEN is set too (every scope); it is not listed here.\n');
    } finally {
      store.close();
    }
  });

  token
    .command('revoke')
    .description('Revoke a token (by the id list shows): the daemon refuses it from its next request')
    .argument('<id>', 'the token\'s id (tok_…)')
    .action((id: string, _opts: unknown, cmd: Command) => {
      const config = commandConfig(cmd, { requireKey: false });
      const store = openStoreOnly(config);
      try {
        const tokens = new TokenStore(store.db, systemClock, null);
        if (!tokens.revoke(id)) {
          if (tokens.exists(id)) {
            process.stdout.write(`token ${id} was already revoked\n`);
            return;
          }
          throw new NotFoundError(`no token ${id} (see topup token list)`);
        }
        process.stdout.write(`token ${id} revoked\n`);
      } finally {
        store.close();
      }
    });
}
