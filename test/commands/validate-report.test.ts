/**
 * Issue 30 (7), `topup validate` as the trial used it: 39,893 identical problem lines were printed
 * one by one (now one line per kind of problem, with its count and first lines), and a file split
 * on a delimiter topup did not pick was refused for a missing pid column without naming the
 * delimiter (now named). German headers are read (`Produkt-ID`, `Spieler-ID`, `Menge`).
 * Real CLI (dist/cli.js) against a real in-process sandbox.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, releaseAll, runCli, tempHome, type TempHome } from '../e2e/harness.js';

let home: TempHome;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  home = tempHome('topup-validate-report-');
  env = cliEnv(home, await inProcessSandbox());
});
afterAll(releaseAll);

describe('topup validate', () => {
  it('prints identical problems once, with their count and first lines; --json still lists each row', async () => {
    const file = join(home.dir, 'many.csv');
    const rows = Array.from({ length: 1200 }, () => ['FFMENA-100', '12']);
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ...rows, ['NOPE', '5123456789']]));
    const r = await runCli(['validate', file], env);
    expect(r.code).toBe(1);
    const same = r.stdout.split('\n').filter((l) => /must be 5–20 digits/.test(l));
    expect(same).toHaveLength(1);
    expect(same[0]).toMatch(/^\s*3, 4, 5, 6, 7 … \(1,200 rows\)\s+userId\s+/);
    expect(r.stdout).toMatch(/^\s*1203\s+pid\s+.*no pack with pid "NOPE"/m);
    expect(r.stdout).toContain('Problems (1201 of 1202 rows cannot be sent)');
    const j = await runCli(['validate', file, '--json'], env);
    expect(JSON.parse(j.stdout).problems).toHaveLength(1201);
  }, 90_000);

  it('names a delimiter the file seems to use: "|", and ";" under a sep=, line', async () => {
    const pipe = join(home.dir, 'pipe.csv');
    writeFileSync(pipe, 'pid|userId\nPUBG-60|5123456789\n');
    const a = await runCli(['validate', pipe], env);
    expect(a.code).toBe(7);
    expect(a.stderr).toContain(`This file seems to use '|' as its delimiter (its header then names "pid", "userId"): topup finds , ; and tab by itself; for '|' put the line sep=| first in the file`);
    const semi = join(home.dir, 'semi.csv');
    writeFileSync(semi, 'sep=,\r\npid;userId\r\nPUBG-60;5123456789\r\n');
    const b = await runCli(['validate', semi], env);
    expect(b.code).toBe(7);
    expect(b.stderr).toContain(`This file seems to use ';' as its delimiter (its header then names "pid", "userId"): topup read it as ','-separated`);
    // The sep=| line it suggests makes the same file readable.
    writeFileSync(pipe, 'sep=|\npid|userId\nPUBG-60|5123456789\n');
    expect((await runCli(['validate', pipe], env)).code).toBe(0);
  }, 90_000);

  it('reads German headers', async () => {
    const file = join(home.dir, 'de.csv');
    writeFileSync(file, 'Produkt-ID;Spieler-ID;Transaktions-ID\r\nPUBG-60;5123456789;DE-1\r\n');
    const r = await runCli(['validate', file], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"Produkt-ID"\s+read as pid \(a common spelling\)/);
  }, 90_000);
});
