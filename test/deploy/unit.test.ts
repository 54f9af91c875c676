/**
 * deploy/topup.service: checked as text always; with systemd-analyze where the machine has it
 * (Debian's `systemd` package): `verify`, and an exposure score of 3.0 or lower.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../e2e/harness.js';

const UNIT = join(ROOT, 'deploy', 'topup.service');
const text = readFileSync(UNIT, 'utf8');
const settings = new Map<string, string[]>();
for (const line of text.split('\n')) {
  const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
  if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), m[2]!]);
}
const one = (k: string): string | undefined => settings.get(k)?.at(-1);
const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('deploy/topup.service as text', () => {
  it('has the required hardening and service settings', () => {
    expect(one('Restart')).toBe('on-failure');
    expect(one('User')).toBe('topup');
    expect(one('EnvironmentFile')).toMatch(/^\/etc\/topup\/topup\.env$/);
    expect(one('ReadWritePaths')).toBe('/var/lib/topup');
    expect(settings.get('Environment')).toContain('TOPUP_HOME=/var/lib/topup');
    expect(one('NoNewPrivileges')).toBe('true');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('ProtectHome')).toBe('true');
    expect(one('PrivateTmp')).toBe('true');
    expect(one('UMask')).toBe('0077');
    // config/config.ts reads the key from $CREDENTIALS_DIRECTORY/topup-api-key.
    expect(one('LoadCredential')).toMatch(/^topup-api-key:\//);
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(settings.has('MemoryDenyWriteExecute')).toBe(false); // V8's JIT needs W+X memory
    expect(one('ExecStart')).toMatch(/cli\.js daemon$/);
    expect(one('KillSignal')).toBe('SIGTERM');
    expect(Number.parseInt(one('TimeoutStopSec')!, 10)).toBeGreaterThan(10); // the daemon exits within 10 s
    expect(one('WantedBy')).toBe('multi-user.target');
  });
});

describe.skipIf(!hasAnalyze)('deploy/topup.service with systemd-analyze', () => {
  // verify checks that ExecStart's program exists: point it at this machine's node.
  const dir = mkdtempSync(join(tmpdir(), 'unit-'));
  const copy = join(dir, 'topup.service');
  writeFileSync(copy, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));

  it('passes systemd-analyze verify', () => {
    const r = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/topup\.service:\d+:/); // no warnings about our lines
  });

  it('scores an exposure of 3.0 or lower with systemd-analyze security --offline', () => {
    const out = execFileSync('systemd-analyze', ['security', '--offline=true', copy], { encoding: 'utf8' });
    const score = Number(/Overall exposure level for topup\.service: ([\d.]+)/.exec(out)?.[1]);
    expect(score).toBeLessThanOrEqual(3.0);
    rmSync(dir, { recursive: true, force: true });
  });
});
