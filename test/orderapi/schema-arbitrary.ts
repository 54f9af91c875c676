/**
 * JSON Schema → fast-check arbitrary, for the subset the order API's document uses: $ref into
 * components.schemas, type string (minLength, maxLength, pattern, format uri / binary), integer
 * and number (minimum, maximum, exclusiveMinimum), boolean, enum, array (items, minItems,
 * maxItems), object (properties, required, additionalProperties false or any). A keyword outside
 * the subset throws: a document that grows a rule this generator does not know fails the test
 * instead of being quietly ignored.
 *
 * Why written here and not a package: none is among the installed devDependencies, and the
 * subset is small; fast-check's own stringMatching does the hard part (a pattern's strings).
 *
 * Sizes are kept small (a long string is still up to maxLength): the point is the rules, and a
 * body near the 16 KB cap is the 413 test's.
 */
import fc from 'fast-check';

type Json = Record<string, any>;

/** Keywords that state no rule on a value (annotations). */
const ANNOTATIONS = new Set(['description', 'example', 'examples', 'default', 'title', 'param', 'nullable', 'deprecated', 'readOnly', 'writeOnly']);
const KNOWN: Record<string, ReadonlySet<string>> = {
  string: new Set(['type', 'minLength', 'maxLength', 'pattern', 'format']),
  integer: new Set(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']),
  number: new Set(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']),
  boolean: new Set(['type']),
  array: new Set(['type', 'items', 'minItems', 'maxItems']),
  // anyOf: only alternatives of required members ({anyOf: [{required: [pid]}, {required: [slug]}]}).
  object: new Set(['type', 'properties', 'required', 'additionalProperties', 'anyOf']),
};

function checkKeywords(s: Json, type: string): void {
  for (const k of Object.keys(s)) {
    if (!ANNOTATIONS.has(k) && !KNOWN[type]!.has(k)) throw new Error(`schema-arbitrary: keyword "${k}" on a ${type} is not in the subset this generator knows`);
  }
}

/** The grapheme strings of length min..max (fast-check counts graphemes, JSON Schema code points: one grapheme here is one code point). */
function text(min: number, max: number): fc.Arbitrary<string> {
  return fc.string({ unit: fc.oneof(fc.constantFrom(...'abcXYZ019 -_.,:/\\%"\'\r\n\t'.split('')), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => [...c].length === 1 && !/[\uD800-\uDFFF]/.test(c))), minLength: min, maxLength: max });
}

export function arbitraryOf(schema: Json, doc: Json): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`schema-arbitrary: no ${schema.$ref}`);
    return arbitraryOf(target, doc);
  }
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const type = schema.type as string | undefined;
  if (type === undefined) {
    // `{}`: any JSON value (meta's values), kept shallow.
    return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  }
  checkKeywords(schema, type);
  switch (type) {
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, 40 + min);
      let arb: fc.Arbitrary<string>;
      if (schema.format === 'uri') arb = fc.webUrl({ withQueryParameters: true, withFragments: true });
      else if (schema.format === 'binary' || schema.format === undefined) arb = schema.pattern ? matching(schema.pattern, min, max) : text(min, max);
      else throw new Error(`schema-arbitrary: format ${schema.format}`);
      // Every rule holds: the pattern (unicode, as JSON Schema reads it), and the lengths in code points.
      const re = schema.pattern ? new RegExp(schema.pattern, 'u') : undefined;
      return arb.filter((s) => (!re || re.test(s)) && [...s].length >= min && [...s].length <= (schema.maxLength ?? Infinity));
    }
    case 'integer': {
      const min = schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? -1_000_000_000);
      const max = schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : (schema.maximum ?? 1_000_000_000);
      return fc.integer({ min, max });
    }
    case 'number': {
      const arb = fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum ?? -1e12, max: schema.maximum ?? 1e12 });
      return arb.filter((n) => (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) && (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum)).map((n) => (Object.is(n, -0) ? 0 : n));
    }
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(arbitraryOf(schema.items ?? {}, doc), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) });
    case 'object': {
      const props = Object.entries<Json>(schema.properties ?? {});
      const required = new Set<string>(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of props) model[k] = arbitraryOf(s, doc);
      const alternatives = (schema.anyOf ?? []) as Json[];
      for (const alt of alternatives) {
        if (Object.keys(alt).some((k) => k !== 'required')) throw new Error('schema-arbitrary: an anyOf alternative other than {required: [...]}');
      }
      const known = fc.record(model, { requiredKeys: [...required] }).filter((o) => alternatives.length === 0 || alternatives.some((alt) => (alt.required as string[]).every((k) => k in (o as Json))));
      if (schema.additionalProperties === false || props.length > 0) return known;
      const extra = fc.dictionary(text(1, 12), arbitraryOf(schema.additionalProperties === true || schema.additionalProperties === undefined ? {} : schema.additionalProperties, doc), { maxKeys: 4 });
      return extra;
    }
    default:
      throw new Error(`schema-arbitrary: type ${type}`);
  }
}

/**
 * Strings a pattern matches. fast-check's stringMatching reads most patterns but not every
 * assertion (the trxid's pattern opens with a lookahead: "not a formula's first character"); for
 * those, any text of the lengths asked, kept where the pattern (in unicode mode) matches it.
 */
function matching(pattern: string, min: number, max: number): fc.Arbitrary<string> {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    const re = new RegExp(pattern, 'u');
    return text(Math.max(min, 1), max).filter((s) => re.test(s));
  }
}
