// The schema-validator processor: compiles a space's JSON Schema once (drafts 04 to 2020-12, offline) and validates features.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import draft04 from 'ajv-draft-04';
import { isObject } from '../../core/json.js';
import { findTooDeepText, MAX_JSON_DEPTH } from '../../core/json-limits.js';

/** A schema text longer than this is refused: ajv turns a schema into code, and the definition is read on every write. */
export const MAX_SCHEMA_BYTES = 256 * 1024;

export type FeatureValidator = (feature: Record<string, unknown>) => string | undefined;

/**
 * The hub is offline: no `loadSchema`, so a `$ref` to a URL that the schema does not hold itself fails compilation.
 * Unknown formats and keywords are ignored rather than refused (strict off), and ajv logs nothing. `ownProperties`:
 * without it ajv tests a property with `data[name] !== undefined`, so a feature without `constructor` or `toString`
 * had them (Object.prototype's), failing `properties` and passing `required` for names it does not hold.
 */
// A CommonJS module: its class is the `default` member of what Node imports.
const AjvDraft04 = draft04.default;

const OPTIONS: Options = { strict: false, allErrors: false, logger: false, validateFormats: false, ownProperties: true };

type Compiler = { compile(schema: object): ValidateFunction };

function compilerFor(schemaUri: unknown): Compiler {
  const uri = typeof schemaUri === 'string' ? schemaUri.replace(/#$/, '').replace(/^https:/, 'http:') : undefined;
  switch (uri) {
    case undefined:
    case 'http://json-schema.org/draft-07/schema':
      return new Ajv(OPTIONS);
    case 'http://json-schema.org/draft-06/schema': {
      const ajv = new Ajv(OPTIONS);
      ajv.addMetaSchema(draft06);
      return ajv;
    }
    case 'http://json-schema.org/draft-04/schema':
      return new AjvDraft04(OPTIONS);
    case 'http://json-schema.org/draft/2019-09/schema':
      return new Ajv2019(OPTIONS);
    case 'http://json-schema.org/draft/2020-12/schema':
      return new Ajv2020(OPTIONS);
    default:
      throw new Error(`its $schema ${JSON.stringify(schemaUri)} is not one of the drafts 04, 06, 07, 2019-09 or 2020-12`);
  }
}

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'the feature does not match the schema';
  return `at ${JSON.stringify(error.instancePath || '/')}: ${error.message ?? error.keyword}`;
}

/** Keywords whose value is data (a constant, examples), not schemas: a `properties` member inside is no keyword. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose value maps names (or patterns) to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

const pointerToken = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first `properties` in `schema` that names `__proto__`: ajv skips that name in `properties`
 * (it guards its own objects so), so the schema would not check it and `additionalProperties` would count it extra.
 */
function uncheckedProperty(schema: unknown, pointer = ''): string | undefined {
  if (Array.isArray(schema)) {
    for (let i = 0; i < schema.length; i++) {
      const found = uncheckedProperty(schema[i], `${pointer}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObject(schema)) return undefined;
  if (isObject(schema.properties) && Object.hasOwn(schema.properties, '__proto__')) return `${pointer}/properties`;
  for (const [keyword, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(keyword)) continue;
    const inner = `${pointer}/${pointerToken(keyword)}`;
    const found = SCHEMA_MAPS.has(keyword) && isObject(value)
      ? Object.entries(value).map(([name, sub]) => uncheckedProperty(sub, `${inner}/${pointerToken(name)}`)).find((at) => at !== undefined)
      : uncheckedProperty(value, inner);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Parses (when given as text) and compiles a schema; throws an Error whose message says what is wrong.
 * `refuseUnchecked` when a client gives the schema: it is refused where ajv would not check it. A stored schema is
 * compiled without, so that the writes to a space whose schema was stored before that check go on as before.
 */
export function compileSchema(given: unknown, { refuseUnchecked = false } = {}): FeatureValidator {
  let schema: unknown = given;
  if (typeof given === 'string') {
    if (Buffer.byteLength(given) > MAX_SCHEMA_BYTES) throw new Error(`it is longer than ${MAX_SCHEMA_BYTES} bytes`);
    if (findTooDeepText(Buffer.from(given), MAX_JSON_DEPTH) !== undefined) throw new Error(`it nests deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      schema = JSON.parse(given);
    } catch {
      throw new Error('it is not valid JSON');
    }
  } else if (isObject(given) && Buffer.byteLength(JSON.stringify(given)) > MAX_SCHEMA_BYTES) {
    throw new Error(`it is longer than ${MAX_SCHEMA_BYTES} bytes`);
  }
  if (!isObject(schema) && typeof schema !== 'boolean') throw new Error('it must be a JSON Schema object, or its text');
  const unchecked = refuseUnchecked ? uncheckedProperty(schema) : undefined;
  if (unchecked !== undefined) throw new Error(`its properties at ${JSON.stringify(unchecked)} name __proto__, which the schema validator (ajv) cannot check`);
  const compiler = compilerFor(isObject(schema) ? schema.$schema : undefined);
  let validate: ValidateFunction;
  try {
    validate = compiler.compile(schema as object);
  } catch (error) {
    // RangeError included: a schema that ajv cannot compile is the client's, never a server error.
    throw new Error(`ajv cannot compile it: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (feature) => (validate(feature) ? undefined : describe(validate.errors?.[0]));
}
