// The `selection` read parameter (API.md 5.1): which feature members a read returns.
import { hubError } from '../core/errors.js';
import { isObject } from '../core/json.js';
import { MAX_JSON_DEPTH } from '../core/json-limits.js';

/** `!geometry` asks for features without their geometry (newest reference behaviour). */
const NO_GEOMETRY = '!geometry';

/** Member names mapped to `true` (keep the whole value) or to the selection below that member. */
export type SelectionTree = Map<string, SelectionTree | true>;

export interface Selection {
  /** What to keep besides `type`, `id` and `geometry`; `'all'` when `*` was given. */
  readonly members: SelectionTree | 'all';
  /**
   * `!geometry` was given (alone or with other names, as the reference does): the feature keeps
   * a `"geometry": null` member so it stays a valid GeoJSON Feature.
   */
  readonly omitGeometry: boolean;
}

/** Members that every selected feature has anyway, in output order. */
const FIXED_MEMBERS = ['type', 'id', 'geometry', 'properties'];

/**
 * `values` are the decoded, comma-split `selection` values. Undefined means "the whole feature":
 * no selection, only empty names, or `*` without `!geometry`. `p.<path>` selects below
 * `properties`; any other name is a dot path from the feature root (`f.` has no meaning and
 * is taken literally).
 */
export function parseSelection(values: readonly string[]): Selection | undefined {
  const names = values.map((value) => value.trim()).filter((name) => name !== '');
  const omitGeometry = names.includes(NO_GEOMETRY);
  if (names.includes('*')) return omitGeometry ? { members: 'all', omitGeometry } : undefined;
  if (names.length === 0) return undefined;
  const members: SelectionTree = new Map();
  for (const name of names) {
    if (name !== NO_GEOMETRY) addPath(members, selectionPath(name));
  }
  return { members, omitGeometry };
}

/**
 * The selected view of a stored feature: `type`, `id`, `geometry` (null when absent or
 * omitted), `properties` (`{}` when nothing below it is selected; the namespace only when
 * selected), then the other selected root members. Shares unchanged values with `feature`.
 */
export function applySelection(feature: Record<string, unknown>, selection: Selection): Record<string, unknown> {
  const picked = selection.members === 'all' ? feature : project(feature, selection.members);
  const result: Record<string, unknown> = {};
  if (Object.hasOwn(feature, 'type')) result.type = feature.type;
  if (Object.hasOwn(feature, 'id')) result.id = feature.id;
  result.geometry = selection.omitGeometry ? null : feature.geometry ?? null;
  result.properties = picked.properties ?? {};
  for (const [name, value] of Object.entries(picked)) {
    if (!FIXED_MEMBERS.includes(name)) defineMember(result, name, value);
  }
  return result;
}

/** A longer path can select nothing stored (docs/decisions.md) and would only deepen the selection tree. */
function selectionPath(name: string): string[] {
  const path = name.startsWith('p.') ? ['properties', ...name.slice(2).split('.')] : name.split('.');
  if (path.length > MAX_JSON_DEPTH) {
    throw hubError('propertyPathTooDeep', { path: `${name.slice(0, 40)}…`, parameter: 'selection', count: path.length, limit: MAX_JSON_DEPTH });
  }
  return path.filter((part) => part !== '');
}

/** Adds `path`; a shorter path already selected wins, a longer one selected before is subsumed. */
function addPath(tree: SelectionTree, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const existing = tree.get(head);
  if (existing === true) return;
  if (rest.length === 0) {
    tree.set(head, true);
    return;
  }
  const subtree: SelectionTree = existing ?? new Map();
  tree.set(head, subtree);
  addPath(subtree, rest);
}

/** Copies the selected members that exist; a nested selection yields nothing when nothing below it exists. */
function project(source: Record<string, unknown>, tree: SelectionTree): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, selected] of tree) {
    if (!Object.hasOwn(source, name)) continue;
    const value = source[name];
    if (selected === true) {
      defineMember(result, name, value);
    } else if (isObject(value)) {
      const nested = project(value, selected);
      if (Object.keys(nested).length > 0) defineMember(result, name, nested);
    }
  }
  return result;
}

/** Plain assignment would turn a member named `__proto__` into the object's prototype. */
function defineMember(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}
