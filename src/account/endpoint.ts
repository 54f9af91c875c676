/**
 * Which API a process talks to: TOPUP_API_URL, or, without one, a sandbox started in this process
 * (its state kept in jobs/sandbox.db), said loudly so that nobody mistakes it for real money.
 * Shared by the daemon and every command that calls the API.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../kernel/log.js';
import { ensureHomeFolders } from '../runtime.js';
import { startSandbox, type RunningSandbox } from '../sandbox/index.js';
import { homeSandboxFile, prepareHomeSandbox } from '../sandbox/home.js';

export interface ApiEndpoint {
  url: string;
  sandbox: RunningSandbox | null;
}

/**
 * `sandboxNotice`: the level of the "SANDBOX: …" notice. The daemon and a command on a terminal
 * say it as a warning (a person must not mistake the sandbox for real orders); a command run by a
 * script (stderr not a terminal) says it at info, so its stderr carries no line it did not ask
 * for (--verbose or TOPUP_LOG_LEVEL=info shows it; the results say SANDBOX anyway).
 */
export async function resolveApi(config: Config, log: Logger, opts: { sandboxNotice?: 'warn' | 'info' } = {}): Promise<ApiEndpoint> {
  if (config.apiUrl) {
    if (config.sandboxBalanceSet) {
      log.warn({ setting: 'TOPUP_SANDBOX_BALANCE_USD' }, 'TOPUP_SANDBOX_BALANCE_USD is ignored: TOPUP_API_URL is set, so orders go to that API, not to the built-in sandbox');
    }
    return { url: config.apiUrl, sandbox: null };
  }
  ensureHomeFolders(config, log);
  // The account, the balance setting and the order ids, before any request (sandbox/home.ts).
  prepareHomeSandbox(config, log);
  const sandbox = await startSandbox({
    apiKey: config.apiKey,
    balanceUsd: config.sandboxBalanceUsd,
    answers: config.sandboxAnswers,
    stateFile: homeSandboxFile(config),
    port: 0,
    logger: log.child({ component: 'sandbox' }),
  });
  log[opts.sandboxNotice ?? 'warn']({ url: sandbox.url, answers: config.sandboxAnswers }, 'SANDBOX: no TOPUP_API_URL set, so orders go to the built-in sandbox; no real money is spent');
  return { url: sandbox.url, sandbox };
}
