// Checks a rights matrix given as input (a token's `urm`, an account's granted rights): its shape, before it is stored.
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { AttributeMap, RightsMatrix } from './claims.js';

/** Beyond this many attribute maps in all, a matrix is refused: it is read on every request the token makes. */
const MAX_MAPS = 1_000;

const isAttributeValue = (value: unknown): boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
  || (Array.isArray(value) && value.every((one) => typeof one === 'string' || typeof one === 'number' || typeof one === 'boolean'));

/** `{service: {action: [attribute map, …]}}` (API.md 8.1), attribute values being scalars or lists of scalars. */
export function parseRightsMatrix(value: unknown, field: string, code: 'invalidAccountInput' | 'invalidTokenInput'): RightsMatrix {
  const fail = (problem: string) => hubError(code, { field, problem });
  if (!isObject(value)) throw fail('expected an object of services, e.g. {"xyz-hub": {"readFeatures": [{}]}}');
  let count = 0;
  for (const [service, actions] of Object.entries(value)) {
    if (!isObject(actions)) throw fail(`the service ${JSON.stringify(service)} must map actions to lists of attribute maps`);
    for (const [action, maps] of Object.entries(actions)) {
      if (!Array.isArray(maps)) throw fail(`the action ${JSON.stringify(action)} must hold a list of attribute maps`);
      for (const map of maps) {
        if (!isObject(map)) throw fail(`the action ${JSON.stringify(action)} holds ${JSON.stringify(map)}, which is not an attribute map (an object)`);
        for (const [key, attribute] of Object.entries(map as AttributeMap)) {
          if (!isAttributeValue(attribute)) throw fail(`the attribute ${JSON.stringify(key)} of the action ${JSON.stringify(action)} must be a string, number, boolean or a list of them`);
        }
        if (++count > MAX_MAPS) throw fail(`at most ${MAX_MAPS} attribute maps are allowed`);
      }
    }
  }
  return value as RightsMatrix;
}
