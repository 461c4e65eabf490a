// Turns a feature into the JSON texts the hub stores and answers with, serializing each part once.
import type { Geometry } from '../geo/geometry.js';
import { pad3D } from '../geo/coordinates.js';
import { geometryBBox } from '../geo/bbox.js';
import type { FeatureWrite } from '../storage/storage.js';
import { NS, type Namespace } from './namespace.js';

/** A feature's parts after normalization, with the namespace held apart from the user properties. */
export interface FeatureParts {
  id: string;
  geometry: Geometry | null;
  properties: Record<string, unknown>;
  namespace: Namespace;
  /** Foreign members at the feature root, kept as given. */
  extra: Record<string, unknown>;
}

export interface FeatureTexts {
  /** What reads return: positions padded to 3D (API.md 5.1). */
  stored: FeatureWrite;
  /** The geometry as `stored` holds it (padded to 3D), for what reads the stored state without parsing it again. */
  storedGeometry: Geometry | null;
  /** What the write response returns: the geometry as written. Built only when asked for. */
  response(): string;
}

/**
 * The feature text from its parts' texts, made flat at once: a template literal makes a rope of a string per `+`, which
 * the COPY encoding then copies flat again, and the rope's pieces outlived a scavenge in every bulk write (docs/decisions.md,
 * "PostgreSQL ingest", seventh round). `properties` is the properties text in pieces (see propertiesTexts).
 */
function compose(id: string, geometryJson: string, properties: readonly string[], extraJson: string): string {
  const pieces = ['{"type":"Feature","id":', JSON.stringify(id), ',"geometry":', geometryJson, ',"properties":', ...properties, extraJson, '}'];
  return pieces.join('');
}

/** The namespace's member name as JSON, made once. */
const NS_KEY = `${JSON.stringify(NS)}:`;

/**
 * The `properties` text with the namespace, as pieces that joined make it, and the user properties' text without it, each
 * serialized once: the namespace stands last, as in `{...properties, [NS]: namespace}`, unless `properties` has a member of
 * its name, whose place it takes. `cut` is the namespace's member with the comma before it, when it ends the text.
 */
function propertiesTexts(properties: Record<string, unknown>, namespace: Namespace): { user: string; all: string[]; cut?: string } {
  if (Object.hasOwn(properties, NS)) {
    const { [NS]: _replaced, ...user } = properties;
    return { user: JSON.stringify(user), all: [JSON.stringify({ ...properties, [NS]: namespace })] };
  }
  const user = JSON.stringify(properties);
  const namespaceJson = JSON.stringify(namespace);
  if (user === '{}') return { user, all: ['{', NS_KEY, namespaceJson, '}'], cut: NS_KEY + namespaceJson };
  return { user, all: [user.slice(0, -1), ',', NS_KEY, namespaceJson, '}'], cut: `,${NS_KEY}${namespaceJson}` };
}

export function featureTexts(parts: FeatureParts): FeatureTexts {
  const { user: userPropertiesJson, all: propertiesJson, cut } = propertiesTexts(parts.properties, parts.namespace);
  const extraKeys = Object.keys(parts.extra);
  const extraJson = extraKeys.length === 0 ? '' : ',' + JSON.stringify(parts.extra).slice(1, -1);
  const padded = parts.geometry && pad3D(parts.geometry);
  const stored = compose(parts.id, JSON.stringify(padded), propertiesJson, extraJson);
  return {
    storedGeometry: padded,
    // Most writes answer nothing (or their ids): the geometry as written is serialized only when asked for.
    response: () => (padded === parts.geometry ? stored : compose(parts.id, JSON.stringify(parts.geometry), propertiesJson, extraJson)),
    stored: {
      id: parts.id,
      json: stored,
      geometryType: parts.geometry?.type ?? null,
      bbox: parts.geometry && geometryBBox(parts.geometry),
      tags: parts.namespace.tags,
      parts: { userProperties: userPropertiesJson, geometry: parts.geometry },
      // The namespace ends the text (NAMESPACE_TAIL) only when it stands last in `properties` and no foreign member follows.
      ...(cut !== undefined && extraJson === '' ? { namespaceCut: cut } : {}),
    },
  };
}

/** Splits a stored feature back into its parts (for patches and conditional writes). */
export function parseStoredFeature(json: string): FeatureParts {
  const { type: _type, id, geometry, properties, ...extra } = JSON.parse(json) as Record<string, unknown>;
  const { [NS]: namespace, ...userProperties } = properties as Record<string, unknown>;
  return {
    id: id as string,
    geometry: (geometry ?? null) as Geometry | null,
    properties: userProperties,
    namespace: namespace as Namespace,
    extra,
  };
}

/** Every stored text starts so (see compose): the id follows as a JSON string. */
const STORED_PREFIX = '{"type":"Feature","id":';

/** The id of a stored feature text, read from its fixed start without parsing the rest. */
export function storedFeatureId(json: string): string {
  if (!json.startsWith(STORED_PREFIX)) return (JSON.parse(json) as { id: string }).id;
  let end = STORED_PREFIX.length + 1;
  while (end < json.length && json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
  return JSON.parse(json.slice(STORED_PREFIX.length, end + 1)) as string;
}
