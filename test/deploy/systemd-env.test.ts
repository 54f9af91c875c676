/**
 * kernel/systemd-env.ts: systemd's EnvironmentFile= rules (env-file.c), line by line, for the
 * operator's wrapper (deploy/topup-cli.sh). Each case is what systemd makes of the line.
 */
import { describe, expect, it } from 'vitest';
import { parseEnvironmentFile } from '../../src/kernel/systemd-env.js';

const one = (text: string): Record<string, string> => parseEnvironmentFile(text).vars;

describe('systemd EnvironmentFile= rules', () => {
  it.each([
    ['a cron line, unquoted: no glob, no word splitting', 'TOPUP_BALANCE_REPORT_CRON=0 */6 * * *\n', { TOPUP_BALANCE_REPORT_CRON: '0 */6 * * *' }],
    ['white space around the key and before the value dropped, and after an unquoted value', '  A  =   x y  \t\n', { A: 'x y' }],
    ['double quotes keep white space', 'A="  x  "\n', { A: '  x  ' }],
    ['single quotes keep everything', "A='$HOME \\n \"q\"'\n", { A: '$HOME \\n "q"' }],
    ['no expansion of $, ~ or $(…)', 'A=$HOME ~ $(id) `id` ${X}\n', { A: '$HOME ~ $(id) `id` ${X}' }],
    ['in double quotes \\" \\\\ \\` \\$ lose the backslash, others keep it', 'A="a\\"b\\\\c\\`d\\$e\\nf"\n', { A: 'a"b\\c`d$e\\nf' }],
    ['unquoted, a backslash takes the next character', 'A=a\\ b\\#c\\\\\n', { A: 'a b#c\\' }],
    ['backslash-newline continues an unquoted value', 'A=one \\\ntwo\nB=3\n', { A: 'one two', B: '3' }],
    ['backslash-newline inside double quotes is dropped', 'A="one\\\ntwo"\n', { A: 'onetwo' }],
    ['a quoted value may span lines', "A='x\ny'\n", { A: 'x\ny' }],
    ['quoted and unquoted parts run together; a quote inside an unquoted value is literal', 'A="x y"z "w"\nB=x"y"\n', { A: 'x yz "w"', B: 'x"y"' }],
    ['comments with # and ; (after white space too), not after a value', '# c\n  ; c\nA=1 # not a comment\n', { A: '1 # not a comment' }],
    ['a comment continued with a backslash swallows the next line', '# c \\\nA=1\nB=2\n', { B: '2' }],
    ['an empty value', 'A=\nB=""\n', { A: '', B: '' }],
    ['a line without = is skipped', 'JUNK\nA=1\n', { A: '1' }],
    ['the last line without a newline', 'A=1\nB=two words', { A: '1', B: 'two words' }],
    ['CRLF line ends', 'A=1\r\nB="x"\r\n', { A: '1', B: 'x' }],
    ['a later line wins', 'A=1\nA=2\n', { A: '2' }],
    ['= in the value', 'A=x=y==\n', { A: 'x=y==' }],
    ['an unclosed quote takes the rest of the file', 'A="x\ny', { A: 'x\ny' }],
  ])('%s', (_what, text, want) => {
    expect(one(text)).toEqual(want);
  });

  it('ignores an assignment whose key is no variable name and says which line, never the value', () => {
    const r = parseEnvironmentFile('A=1\nexport B=secret-value\n1X=2\nC-D=3\n');
    expect(r.vars).toEqual({ A: '1' });
    expect(r.ignored).toEqual(['line 2: export B', 'line 3: 1X', 'line 4: C-D']);
    expect(r.ignored.join()).not.toContain('secret-value');
  });
});
