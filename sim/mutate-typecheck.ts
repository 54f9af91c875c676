/**
 * `npm run mutate:sim`'s compile check (what Stryker's TypeScript checker does): a mutant whose
 * file no longer type-checks could never ship (`npm run typecheck` refuses it), so it is counted
 * neither killed nor survived. One TypeScript language service over tsconfig.json's program; each
 * mutant swaps one file's text (the original with the mutant's span replaced) and asks for that
 * file's diagnostics only. A mutant that changes an inferred type seen by other files is checked in
 * its own file only: it may be run although a caller would no longer compile (counted, as Stryker
 * without a checker counts every mutant).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

export interface MutantSpan {
  /** Repository-relative path. */
  file: string;
  /** 0-based lines and columns, as the instrumenter reports them. */
  start: { line: number; column: number };
  end: { line: number; column: number };
  replacement: string;
}

export function offsetOf(text: string, pos: { line: number; column: number }): number {
  let at = 0;
  for (let l = 0; l < pos.line; l++) {
    at = text.indexOf('\n', at) + 1;
    if (at === 0) throw new Error(`line ${pos.line} past the end of the file`);
  }
  return at + pos.column;
}

/** The file's text with the mutant applied. */
export function applyMutant(text: string, m: MutantSpan): string {
  return text.slice(0, offsetOf(text, m.start)) + m.replacement + text.slice(offsetOf(text, m.end));
}

export class MutantTypeChecker {
  readonly #root: string;
  readonly #service: ts.LanguageService;
  readonly #versions = new Map<string, number>();
  readonly #override = new Map<string, string>();
  /** Each file's own diagnostics, unmutated (none in a tree that type-checks). */
  readonly #before = new Map<string, Set<string>>();

  constructor(root: string) {
    this.#root = root;
    const configPath = join(root, 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, (p) => ts.sys.readFile(p)).config, ts.sys, root);
    const options = { ...parsed.options, noEmit: true };
    const host: ts.LanguageServiceHost = {
      getScriptFileNames: () => parsed.fileNames,
      getScriptVersion: (f) => String(this.#versions.get(resolve(f)) ?? 0),
      getScriptSnapshot: (f) => {
        const over = this.#override.get(resolve(f));
        if (over !== undefined) return ts.ScriptSnapshot.fromString(over);
        const text = ts.sys.readFile(f);
        return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
      },
      getCurrentDirectory: () => root,
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: (f) => ts.sys.fileExists(f),
      readFile: (f) => ts.sys.readFile(f),
      readDirectory: (...a) => ts.sys.readDirectory(...a),
      directoryExists: (d) => ts.sys.directoryExists(d),
      getDirectories: (d) => ts.sys.getDirectories(d),
    };
    this.#service = ts.createLanguageService(host, ts.createDocumentRegistry());
  }

  #diagnostics(abs: string): string[] {
    const d = [...this.#service.getSyntacticDiagnostics(abs), ...this.#service.getSemanticDiagnostics(abs)];
    return d.map((x) => ts.flattenDiagnosticMessageText(x.messageText, '\n'));
  }

  /** The type errors the mutant brings into its file (none: it compiles). */
  check(m: MutantSpan): string[] {
    const abs = resolve(this.#root, m.file);
    const original = readFileSync(abs, 'utf8');
    let before = this.#before.get(abs);
    if (!before) this.#before.set(abs, (before = new Set(this.#diagnostics(abs))));
    this.#override.set(abs, applyMutant(original, m));
    this.#versions.set(abs, (this.#versions.get(abs) ?? 0) + 1);
    try {
      return this.#diagnostics(abs).filter((d) => !before.has(d));
    } finally {
      this.#override.delete(abs);
      this.#versions.set(abs, (this.#versions.get(abs) ?? 0) + 1);
    }
  }
}
