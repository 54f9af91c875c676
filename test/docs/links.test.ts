/**
 * Every relative link of README.md and docs/*.md resolves: the file exists relative to the page
 * that links it (a `docs/x.md` link from docs/ would be docs/docs/x.md: broken), and a `#anchor`
 * names a heading of its target (GitHub's slugs). External links are not fetched.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const s = slug(m[1]!);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    out.add(n === 0 ? s : `${s}-${n}`);
  }
  for (const m of readFileSync(file, 'utf8').matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

export function brokenLinks(pages: readonly string[]): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    let fence = false;
    const lines = readFileSync(page, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.startsWith('```')) fence = !fence;
      if (fence) return;
      for (const m of line.replace(/`[^`]*`/g, (c) => (c.includes('](') ? c : '')).matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = m[1]!;
        if (/^[a-z]+:/i.test(href)) continue;
        const [path, anchor] = href.split('#') as [string, string | undefined];
        const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
        const where = `${relative(ROOT, page)}:${i + 1} ${href}`;
        if (!existsSync(target)) broken.push(`${where} (no ${relative(ROOT, target)})`);
        else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${where} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    });
  }
  return broken;
}

describe('links in the docs', () => {
  it('every relative link of README.md and docs/*.md resolves, anchors included', () => {
    const pages = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
    expect(brokenLinks(pages)).toEqual([]);
  });
});
