import type { Command } from 'commander';
import { registerDaemon } from './daemon.js';
import { registerValidate } from './validate.js';
import { registerSubmit } from './submit.js';
import { registerStatus } from './status.js';
import { registerCancel } from './cancel.js';
import { registerRetry } from './retry.js';
import { registerCatalog } from './catalog.js';
import { registerServices } from './services.js';
import { registerBalance } from './balance.js';
import { registerOrder } from './order.js';
import { registerHistory } from './history.js';
import { registerTemplate } from './template.js';
import { registerDoctor } from './doctor.js';
import { registerReview } from './review.js';
import { registerWebhooks } from './webhooks.js';
import { registerToken } from './token.js';
import { registerAccounts } from './accounts.js';

export function registerCommands(program: Command): void {
  registerDaemon(program);
  registerSubmit(program);
  registerValidate(program);
  registerStatus(program);
  registerCancel(program);
  registerRetry(program);
  registerReview(program);
  registerTemplate(program);
  registerCatalog(program);
  registerServices(program);
  registerBalance(program);
  registerOrder(program);
  registerHistory(program);
  registerDoctor(program);
  registerWebhooks(program);
  registerToken(program);
  registerAccounts(program);
}
