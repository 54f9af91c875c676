/**
 * `topup status | head -5`: the reader closes the pipe, and the next write to stdout fails with
 * EPIPE. That ends nothing the operator asked for, so it must not end the command with a stack
 * trace and exit 1 (a new-user trial saw `Error: write EPIPE … Unhandled 'error' event`). The real
 * CLI, its stdout a pipe whose reading end the test closes, must exit 0 with nothing on stderr.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

/**
 * Runs the CLI with stdout piped and closes the pipe's reading end before the CLI writes (it is
 * still starting), so its first write to stdout meets EPIPE, as a write after `head` quit does.
 */
function withStdoutClosed(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.destroy();
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`topup ${args.join(' ')} timed out\nstderr: ${stderr.slice(-2000)}`));
    }, 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('stdout closed by its reader (topup … | head)', () => {
  // status (a table, and --json) prints through commands/output.ts printList; --help through
  // commander; both write to the same process.stdout, which the CLI guards in one place.
  for (const args of [['status'], ['status', '--json'], ['status', '--csv'], ['--help']]) {
    it(`topup ${args.join(' ')} ends quietly with exit 0`, async () => {
      const home = tempHome();
      const r = await withStdoutClosed(args, cliEnv(home, null));
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at .*\(/);
      expect(r.stderr).toBe('');
      expect(r.signal).toBeNull();
      expect(r.code).toBe(0);
    });
  }
});
