import type { Command } from 'commander';
import { registerDaemon } from './daemon.js';

export function registerCommands(program: Command): void {
  registerDaemon(program);
}
