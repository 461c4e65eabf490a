// Plain typed query objects that the hub hands to storage; each engine compiles them to its own SQL.
import type { SpatialFilter } from '../geo/spatial-filter.js';
import type { TextFold } from './unicode-folds.js';

/** OR of AND-groups of normalized tags: `a+b,c` is `[["a","b"],["c"]]`. An empty list means no filter. */
export type TagExpression = string[][];

export type JsonScalar = string | number | boolean | null;

export type PropertyOperator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains';

/**
 * One property condition (API.md 5.5). `path` addresses a member of the stored feature from its
 * root (`p.name` is `["properties","name"]`, `f.id` is `["id"]`). The values are OR-ed; several
 * conditions are AND-ed. A `null` value stands for `.null` (missing or JSON null); for `contains`
 * a value may be an object or array (JSON containment, like PostgreSQL `jsonb @>`).
 */
export interface PropertyCondition {
  path: string[];
  op: PropertyOperator;
  values: Array<JsonScalar | object>;
}

/**
 * A boolean combination of property conditions (OGC CQL2 filters, docs/ogc-filtering.md). A condition whose property
 * is missing or JSON null is unknown, as in SQL, unless it tests for null (`eq`/`ne` with `null`): NOT of unknown stays
 * unknown, and a feature whose expression is unknown or false is left out. `like` holds for a string matching a CQL2
 * pattern (`%` any run, `_` one character, `\` escapes), case-sensitive. An empty `and` is true, an empty `or` false.
 * `text` is a string property folded by each of `folds` in turn (CQL2 CASEI, ACCENTI; src/core/unicode-folds.ts),
 * compared by UTF-8 bytes with a value the hub has folded alike; a property that is no string makes it unknown.
 * `like` with `folds` matches the folded property.
 */
export type FilterExpression =
  | { kind: 'and' | 'or'; items: FilterExpression[] }
  | { kind: 'not'; item: FilterExpression }
  | { kind: 'condition'; condition: PropertyCondition }
  | { kind: 'like'; path: string[]; pattern: string; folds?: TextFold[] }
  | { kind: 'text'; op: ComparisonOperator; path: string[]; folds: TextFold[]; value: string }
  | { kind: 'numeric'; op: ComparisonOperator; left: NumericExpression; right: NumericExpression }
  | { kind: 'properties'; op: ComparisonOperator; left: string[]; right: string[] };

export type ComparisonOperator = Exclude<PropertyOperator, 'contains'>;

export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%' | 'div' | '^';

/**
 * A number computed per feature (CQL2 arithmetic, docs/ogc-filtering.md), in IEEE doubles on both engines. A property
 * is its value when that is a JSON number, else null. Null in, null out; so is a result that is not a finite number
 * (division by zero, overflow, a complex power). `div` truncates toward zero; `%` is `a - b * (a div b)`.
 * A `numeric` comparison with a null side is unknown, as a condition on a missing property is. A `properties`
 * comparison holds between two values of the same JSON type (number, string by UTF-8 bytes, boolean); between
 * others, or with a missing or null side, it is unknown.
 */
export type NumericExpression =
  | { kind: 'number'; value: number }
  | { kind: 'property'; path: string[] }
  | { kind: 'arithmetic'; op: ArithmeticOperator; left: NumericExpression; right: NumericExpression };

export interface FeatureFilter {
  tags?: TagExpression;
  properties?: PropertyCondition[];
  /** AND-ed with `properties`. */
  where?: FilterExpression;
  /**
   * Only a stable 1/n of the features (n > 1): those whose insertion sequence hashes to 0 modulo n
   * (`SAMPLE_HASH`). A feature is in or out on every read and on both engines (viz sampling, API.md 6.3).
   */
  sample?: number;
}

/**
 * The sampling hash of an insertion sequence: Knuth's multiplicative hash, kept to 32 bits. Both engines
 * compute it in SQL with 64-bit integers (exact for sequences below 3 × 10^9).
 */
export const SAMPLE_HASH = { multiplier: 2654435761, modulus: 4294967296 } as const;

export interface FeatureQuery extends FeatureFilter {
  /** Only features that meet it; results stay in insertion order. */
  spatial?: SpatialFilter;
  /** Only these ids; results then come in the order of this list. */
  ids?: string[];
  /** Only features whose insertion sequence is greater (iterate handles). */
  afterSeq?: number;
  limit: number;
  /** The space as it was right after this version (ADR 002); absent: HEAD, read from the current rows alone. */
  version?: number;
}

/** A stored feature as the read path sees it: its insertion sequence and its ready JSON text. */
export interface FeatureRow {
  seq: number;
  json: string;
}

/**
 * A page of features as one text: their stored JSON joined by commas, in result order, ready to be
 * copied into a response. The engine may hand it over as UTF-8 bytes, which spares a decode and an encode.
 */
export interface FeatureTextPage {
  text: string | Buffer;
  count: number;
  /** The insertion sequence of the page's last feature (iterate handles). */
  lastSeq: number;
  /** Set on a page of plain texts (`queryText`'s `plain`): how many of its texts had the namespace cut out (namespace-cut.ts). */
  cut?: number;
}

/** One key of a sorted read: a member of the feature from its root (`["id"]`, `["properties","name"]`), ascending unless `descending`. */
export interface SortKey {
  path: string[];
  descending: boolean;
}

/**
 * Where a feature stands on one sort key, as both engines compute it in SQL: the rank of its JSON type (0 number,
 * 1 string, 2 boolean, 3 null, missing, object or array), the number (booleans 0 and 1, else 0), the string (else
 * ''). Keys compare by rank, then number, then string (UTF-8 bytes), so the order is total and the same on both
 * engines: null sorts after every value ascending and before them descending, as PostgreSQL's NULLS LAST/FIRST does.
 */
export type SortValue = [rank: number, number: number, text: string];

/**
 * A page of features in the order of `sort` (whose last key must identify a feature: `["id"]`), after the feature that
 * stood at `after` (one value per key), at most `limit`. Same filters as a FeatureQuery without ids.
 */
export interface SortedQuery extends FeatureFilter {
  spatial?: SpatialFilter;
  sort: SortKey[];
  after?: SortValue[];
  limit: number;
  version?: number;
}

/**
 * The stored texts of a sorted page in order, where each stands (`keys`, one value per sort key) and where the page
 * ends, which `after` resumes from (absent when the page is empty; a plain space's is its last feature's keys).
 */
export interface SortedPage {
  texts: string[];
  keys: SortValue[][];
  last?: SortValue[];
}
