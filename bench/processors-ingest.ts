// Benchmark section `processors`: one 10,000-feature PUT into a space with a schema and tagging rules, against the same PUT into a plain space.
import { cityFeature, loadCities } from './data.js';
import type { HubClient } from './http.js';
import { fastest, perSecond, type Rate, timed } from './measure.js';

/** The write: 10,000 features in one request. */
const FEATURES = 10_000;

/** What a city must look like: required members with types, a pattern, an enum and bounds. */
const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['type', 'geometry', 'properties'],
  properties: {
    type: { const: 'Feature' },
    geometry: {
      type: 'object',
      required: ['type', 'coordinates'],
      properties: {
        type: { const: 'Point' },
        coordinates: { type: 'array', minItems: 2, maxItems: 3, items: [{ type: 'number', minimum: -180, maximum: 180 }, { type: 'number', minimum: -90, maximum: 90 }] },
      },
    },
    properties: {
      type: 'object',
      required: ['name', 'country', 'population', 'featureCode'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
        population: { type: 'integer', minimum: 0 },
        featureCode: { enum: ['PPL', 'PPLA', 'PPLA2', 'PPLA3', 'PPLA4', 'PPLA5', 'PPLC', 'PPLCH', 'PPLF', 'PPLG', 'PPLH', 'PPLL', 'PPLQ', 'PPLR', 'PPLS', 'PPLW', 'PPLX', 'STLMT'] },
        adminCode: { type: 'string' },
      },
    },
  },
};

/** Three rules with filters, on a property value, a property threshold and a coordinate. */
const TAGGING_RULES = {
  capital: "$.features[?(@.properties.featureCode === 'PPLC')]",
  large: '$.features[?(@.properties.population >= 100000)]',
  north: '$.features[?(@.geometry.coordinates[1] >= 60)]',
};

const PROCESSORS = [
  { id: 'schema-validator', params: { schema: SCHEMA } },
  { id: 'rule-tagger', params: { taggingRules: TAGGING_RULES } },
];

export interface ProcessorsBench {
  client: HubClient;
  /** Timed PUTs per side, taking turns. */
  turns: number;
  goal: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

async function createSpace(client: HubClient, definition: Record<string, unknown>): Promise<string> {
  const body = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify(definition), { 'content-type': 'application/json' });
  return (JSON.parse(body.toString()) as { id: string }).id;
}

/** The PUT into a new space, timed from request to answer; the space is checked and deleted afterwards. */
async function putInto(client: HubClient, processors: boolean, body: Buffer): Promise<{ rate: Rate; space: string }> {
  const space = await createSpace(client, { title: `bench processors ${processors ? 'on' : 'off'}`, ...(processors ? { processors: PROCESSORS } : {}) });
  const rate = await timed(async () => {
    await client.expect(204, 'PUT', `/hub/spaces/${space}/features`, body, { accept: 'application/x-empty' });
    return FEATURES;
  });
  const counted = JSON.parse((await client.expect(200, 'GET', `/hub/spaces/${space}/count`)).toString()) as { count: number };
  if (counted.count !== FEATURES) throw new Error(`the space holds ${counted.count} of ${FEATURES} features`);
  return { rate, space };
}

const tagsOf = (body: Buffer): string[] => {
  const feature = JSON.parse(body.toString()) as { properties: { '@ns:com:here:xyz': { tags: string[] } } };
  return feature.properties['@ns:com:here:xyz'].tags;
};

/** The processors ran: a capital got the rule's tag in the processors space, and not in the plain one. */
async function checkTagged(client: HubClient, capitalId: string, processed: string, plain: string): Promise<void> {
  const path = (space: string) => `/hub/spaces/${space}/features/${capitalId}`;
  if (!tagsOf(await client.expect(200, 'GET', path(processed))).includes('capital')) throw new Error(`capital ${capitalId} was not tagged by the rule`);
  if (tagsOf(await client.expect(200, 'GET', path(plain))).includes('capital')) throw new Error(`capital ${capitalId} was tagged in the plain space`);
}

export async function processorsIngest(bench: ProcessorsBench): Promise<void> {
  const cities = loadCities(FEATURES);
  if (cities.length < FEATURES) throw new Error(`only ${cities.length} cities for ${FEATURES} features`);
  const body = Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: cities.map(cityFeature) }));
  const capital = cities.find((city) => city.featureCode === 'PPLC');
  if (!capital) throw new Error('no capital among the cities');

  bench.log(`processors: PUT of ${FEATURES} cities into a plain space and a space with both processors, ${bench.turns} turns`);
  // One untimed PUT per side first: it warms up the JIT (and compiles the schema) on both paths.
  const warmPlain = await putInto(bench.client, false, body);
  const warmProcessed = await putInto(bench.client, true, body);
  await checkTagged(bench.client, String(capital.cityId), warmProcessed.space, warmPlain.space);
  const spaces = [warmPlain.space, warmProcessed.space];

  const plainRuns: Rate[] = [];
  const processedRuns: Rate[] = [];
  for (let turn = 0; turn < bench.turns; turn++) {
    // The side that goes first alternates, so that neither always follows the other's garbage.
    for (const processors of turn % 2 === 0 ? [false, true] : [true, false]) {
      const { rate, space } = await putInto(bench.client, processors, body);
      (processors ? processedRuns : plainRuns).push(rate);
      spaces.push(space);
    }
    // Fewer stored features keep the turns alike.
    while (spaces.length > 0) await bench.client.expect(204, 'DELETE', `/hub/spaces/${spaces.pop()}`);
  }
  const ratios = processedRuns.map((run, turn) => `${((100 * perSecond(run)) / perSecond(plainRuns[turn])).toFixed(0)}%`);
  bench.note(`Processors PUT features/s against the plain PUT's, turn by turn: ${ratios.join(', ')}.`);
  bench.addRow({
    figure: `PUT ${FEATURES.toLocaleString('en-US')} features, schema + 3 tagging rules`, unit: 'features/s',
    http: fastest(processedRuns), floor: fastest(plainRuns), goal: bench.goal,
    note: `floor: the same PUT into a plain space; 1 request, new space each; the two take turns, best of ${bench.turns}`,
  });
}
